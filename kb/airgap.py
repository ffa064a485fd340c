"""Process-wide switches that keep third-party libraries off the network (imported first by ``kb/__init__``).

onnxruntime 1.29+ ships telemetry on Linux: creating a session writes a device id under ``~/.cache/Microsoft`` and
looks up ``mobile.events.data.microsoft.com`` (seen with strace). Only ``ORT_DISABLE_TELEMETRY=1`` set before
onnxruntime is imported stops it (``disable_telemetry_events()`` comes too late; setting the variable after the
import does not work either), and PyMuPDF imports onnxruntime, so this runs when ``kb`` is first imported, before
any of them. The Hugging Face switches make a missing local file an error instead of a download attempt.
"""

from __future__ import annotations

import os

OFFLINE_ENV = {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def seal() -> None:
    """Set the offline switches (forced, not defaults: this product never goes online)."""
    os.environ.update(OFFLINE_ENV)


seal()
