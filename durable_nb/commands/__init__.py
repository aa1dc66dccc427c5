"""The subcommands of ``python -m durable_nb``, one module each.

A subcommand module has ``add_parser(subparsers)``: it adds its parser and
sets ``run`` (a function of the parsed arguments returning the exit status)
as a default. :data:`durable_nb.__main__.COMMANDS` lists the modules.
"""
