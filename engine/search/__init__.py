"""From a question to ranked passages: eligibility before both branches, the stages and their
trace (stages), rank fusion, the device boost, the reranker, the final context, and the
diagnosis of a missing passage.
"""
