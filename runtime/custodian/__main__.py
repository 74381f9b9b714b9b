"""`python -m custodian` is the same as the `custodian` console script."""

from custodian.cli import main

raise SystemExit(main())
