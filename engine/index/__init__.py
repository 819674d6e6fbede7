"""The index on disk: one SQLite database and generation folders (store, integrity), the
lexical and vector components (lexical, vectors, hnsw_file), the build (build) and the
in-memory view a search reads (snapshot).
"""
