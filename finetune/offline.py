"""The switches that keep every fine-tuning stage off the network: set when ``finetune`` is first imported.

A job reads a local base model and local data, so a missing file must be an error, never a download; Unsloth
also reports usage statistics to the Hugging Face Hub unless told not to. ``finetune`` stands alone (it does not
import ``kb``, whose ``kb/airgap.py`` does the same for the app). Forced, not defaults: this product never goes
online. The Hub library reads its switches when it is imported, hence at ``import finetune``, before any stage
loads transformers.
"""

from __future__ import annotations

import os

__all__ = ["OFFLINE_ENV", "seal"]

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "UNSLOTH_DISABLE_STATISTICS": "1",
}


def seal() -> None:
    os.environ.update(OFFLINE_ENV)


seal()
