"""`python -m custodian_runtime` is the same as the `custodian` console script."""

from custodian_runtime.cli import main

raise SystemExit(main())
