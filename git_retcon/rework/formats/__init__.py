"""The failure formats, a module per language or family of tools; parsers.py holds the table.

Each parser reads the output's lines into a Collector (rework/parsed.py): the failing
locations, the names, modules and packages reported missing, the failing tests, the lines
worth showing (evidence) and the first error's words (the cause).
"""
