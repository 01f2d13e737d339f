"""Scheduling records: one structured record per ``select_destinations`` run.

``record.py`` builds a ``SchedulingRecord`` from the run's trace; backends
(stevedore namespace ``cellplane.scheduler.records``, chosen by
``[scheduler] record_backend``) store and find them: ``jsonlines``
(``jsonlines.py``, a size-rotated file) and ``database`` (``database.py``, an
API DB table with a retention limit). ``writer.py`` writes them off the
reply path; ``loading.py`` picks the backend the configuration names.
"""
