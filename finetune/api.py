"""The public functions, one per stage (each imports its heavy dependencies only when called)."""

from __future__ import annotations

from .config import ConfigError, FinetuneError, JobConfig, load_config
from .converter import find_converter, setup_converter
from .dataprep import PrepareReport, prepare
from .gguf import ExportResult, export_gguf, quantize
from .merging import merge
from .training import TrainResult, train
from .verification import VerifyResult, verify, write_manifest

__all__ = ["ConfigError", "FinetuneError", "JobConfig", "load_config", "prepare", "PrepareReport", "train",
           "TrainResult", "merge", "export_gguf", "ExportResult", "quantize", "verify", "VerifyResult",
           "write_manifest", "setup_converter", "find_converter"]
