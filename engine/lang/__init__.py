"""Language rules, one home each: text positions and sentences (text), units of a passage,
condition, forward-reference and injection cues (evidence).
"""
