"""The exit codes of each command, as the epilog of its ``--help`` (the README lists them too).

``\\b`` keeps click from re-wrapping the block: one code a line, continuation lines indented.
"""

from __future__ import annotations

RUN = """\b
Exit codes:
  0    every exercised requirement passed, or every failure was waived
       (--waivers: CONFORMANT WITH N WAIVERS), or (with --baseline) every
       failure found was failing in the baseline too
  1    at least one requirement failed (with --baseline: one that did not
       fail in the baseline), or --strict-waivers found a stale waiver
  2    the run could not start, tested nothing or did not finish: bad
       options or files, preflight refused, --max-duration spent, a test
       process crashed, the server stopped answering or rate limited
       requests longer than the run could wait, Ctrl-C or SIGTERM
       (an unfinished run still writes its reports and says why)
"""

VALIDATE = """\b
Exit codes:
  0    every exercised requirement passed
  1    at least one requirement failed
  2    the recording, the profile or the options could not be used, or no
       exchange of the recording exercised a requirement
"""

VERIFY = """\b
Exit codes:
  0    verified: every file's hash matches, and the signature
  1    not verified: a file changed, missing or added, a bad signature, or
       no signature without --allow-unsigned
  2    cannot verify: no readable manifest, bad arguments, unreadable key
"""

MERGE = """\b
Exit codes:
  0    every exercised requirement of the merged run passed
  1    at least one requirement failed
  2    not every shard of one run: a shard missing or given twice, shards
       of other versions, seeds, targets or options, an unreadable
       results.json, files that are not those its manifest lists, a
       shard not signed with --public-key (or --sign-key); a shard that
       did not finish; reports not written
"""

REPORT = """\b
Exit codes:
  0    written
  2    the results.json could not be read or the output not written
"""

SELFTEST = """\b
Exit codes:
  0    every fault caught, and the run without a fault passed
  1    a fault was not caught, a run gave no verdict or timed out, or the
       run without a fault failed
  2    bad options, or the fault catalogue or --report could not be used
  130  interrupted (Ctrl-C or SIGTERM): every run was stopped
"""

DIFF = """\b
Exit codes:
  0    no requirement failed in NEW that did not fail in OLD
  1    at least one new failure: a requirement failed in NEW that passed,
       was not exercised or was not selected in OLD
  2    a file could not be read or is not a results.json this version reads
"""
