"""Every command teaches: it has help with an Example."""

import click
from click.testing import CliRunner

from prchain.cli import main


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))


def test_every_command_has_help_with_an_example() -> None:
    runner = CliRunner()
    found = list(_commands(main))
    assert found, "no commands registered"
    for path, command in found:
        result = runner.invoke(main, [*path, "-h"])
        assert result.exit_code == 0, (path, result.output)
        assert command.help and "Example" in command.help, (
            f"`prchain {' '.join(path)}` lacks an Example"
        )


def test_unknown_config_key_is_one_clear_line(tmp_path) -> None:
    result = CliRunner().invoke(main, ["stats", "--set", "store.nope=1"])
    assert result.exit_code == 2  # a configuration error
    assert "invalid configuration" in result.output
