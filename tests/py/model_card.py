"""Print the front matter of a model card as gguf-py reads it (`Metadata.load_model_card`), as JSON.

Usage: python model_card.py MODEL_DIR     -> {} when there is no README.md or no front matter
"""
import json
import sys
from pathlib import Path

from gguf.metadata import Metadata

json.dump(Metadata.load_model_card(Path(sys.argv[1])), sys.stdout, ensure_ascii=False, default=str)
sys.stdout.write("\n")
