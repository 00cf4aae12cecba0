"""`python -m memoracle.cli …`: the same CLI as the `memoracle` command."""

from memoracle.cli import main

main()
