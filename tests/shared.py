"""Where the project's shared material lives: ``../shared`` beside the repository (seeds,
reference documents and the goldens printed by HTCondor's own tools)."""

from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
