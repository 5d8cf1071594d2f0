"""Where models come from: the catalogue, the models folder and its downloads, PyPI wheels, the
starter model, the recommendation for this machine, and GGUF facts read without loading."""
