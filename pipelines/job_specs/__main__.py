"""``python -m pipelines.job_specs OUTPUT module:function ARGS...``: one task in a process of its own.

For a task that cannot share the job's process (see :mod:`pipelines.job_specs.runner`);
stdout and stderr already go to the task's log, and what it prints also to OUTPUT.
"""

from __future__ import annotations

import sys

from pipelines.job_specs.task_call import main

__all__: list[str] = []

sys.exit(main(sys.argv[1:]))
