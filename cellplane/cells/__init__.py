"""The cells as the top level reaches them: one engine per cell database, reads of every cell at once.

``databases`` keeps an engine per cell from the cell mappings (which are
``cellplane.objects.cell_mappings``); ``scatter_gather`` runs one read per
cell at once and stops waiting at a deadline.
"""
