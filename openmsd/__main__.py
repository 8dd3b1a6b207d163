"""``python -m openmsd``: the ``openmsd`` command."""

from openmsd.cli import main

main()
