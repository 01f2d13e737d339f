"""Running the reference Placement's gabbi suite against cellplane-placement.

tools/run_reference_gabbits.py is the command; these modules are its parts:
the reference's fixtures over our API (fixtures), the server profiles its
files ask for (profiles), what serves them (targets: in-process or a live
daemon), the expected-failure list and verdict (expectations), the output
(report).
"""
