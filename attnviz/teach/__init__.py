"""Explanatory text, pitfalls, the quiz, the √d_k experiment."""
