"""Compiler infrastructure: parse, annotate, analyse, rewrite and load Python code.

Everything here works on gast trees; see parser.py for the way in and loader.py
for the way out.
"""
