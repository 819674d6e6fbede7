"""Scoring against question sets: retrieval (R@k, MRR, misses) and answers (cited rate,
abstention, first claim).
"""
