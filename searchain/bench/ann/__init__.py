"""ANN libraries and the HNSW baseline the compact index was chosen against."""
