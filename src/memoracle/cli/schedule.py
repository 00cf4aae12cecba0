"""Running the jobs on time: `schedule print|install|remove` and `daemon`."""

from __future__ import annotations

import signal
import threading

import click

from memoracle.cli.context import (
    current,
    engine_errors,
    executable,
    home_option,
)
from memoracle.cli.main import main
from memoracle.jobs import (
    health,
    nightly,
    schedule,
)


@main.group(name="schedule")
def schedule_group() -> None:
    """When the nightly run, the health check and the weekly canary probe run
    (schedule.* in config.toml, cron expressions in workspace.timezone)."""


@schedule_group.command(name="print")
@home_option
@click.option("--cron", "form", flag_value="cron", default=True, help="Crontab lines (default).")
@click.option("--systemd", "form", flag_value="systemd", help="systemd user units.")
def schedule_print(form: str) -> None:
    """Print the crontab lines, or the systemd service and timer units, that run the
    jobs. Nothing is installed.

    \b
    Example:
      memoracle schedule print --systemd
    """
    with engine_errors():
        settings = current().settings()
        if form == "cron":
            click.echo("\n".join(schedule.cron_lines(settings, executable=executable())))
            return
        for name, text in schedule.systemd_units(settings, executable=executable()).items():
            click.echo(f"# ~/.config/systemd/user/{name}\n{text}")
        timers = " ".join(f"memoracle-{job.name}.timer" for job in schedule.JOBS)
        click.echo(
            f"# then: systemctl --user daemon-reload; systemctl --user enable --now {timers}"
        )


@schedule_group.command(name="install")
@home_option
def schedule_install() -> None:
    """Put the jobs in your crontab (this HOME's lines replaced, every other line kept).
    Where there is no crontab program it says so and changes nothing.

    \b
    Example:
      memoracle schedule install
    """
    with engine_errors():
        lines = schedule.install_crontab(current().settings(), executable=executable())
    click.echo(f"installed {len(lines) - 1} job(s) in your crontab:")
    for line in lines:
        click.echo(f"  {line}")


@schedule_group.command(name="remove")
@home_option
def schedule_remove() -> None:
    """Take this HOME's jobs out of your crontab; other lines are kept.

    \b
    Example:
      memoracle schedule remove
    """
    with engine_errors():
        removed = schedule.remove_crontab(current().settings())
    click.echo(f"removed {removed} line(s) from your crontab")


@main.command(name="daemon")
@home_option
def daemon_command() -> None:
    """Run the nightly run, the health check and the weekly canary probe on their
    schedule, in this one process (for containers and service managers): each run is
    logged in HOME/daemon.log; SIGTERM or Ctrl-C stops it cleanly after the job under
    way. One daemon per HOME.

    \b
    Example:
      memoracle daemon
    """
    ctx = current()
    settings = ctx.settings()
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        click.echo(f"stopping ({signal.Signals(signum).name})", err=True)
        stop.set()

    def run_job(job: schedule.Job) -> dict[str, object]:
        with ctx.engine() as engine:
            if job.name == "nightly":
                report = nightly.run_nightly(engine, actor="daemon")
                return {"seconds": report.seconds, "problems": report.problems}
            checked = health.check(engine, probe=job.name == "probe")
            health.write(engine, checked)
            return {"health": checked.status, "warnings": [w.code for w in checked.warnings]}

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    click.echo(
        f"memoracle daemon for {settings.home}: log in {settings.home / schedule.DAEMON_LOG}",
        err=True,
    )
    with engine_errors():
        schedule.run_daemon(settings, run_job, now=lambda: ctx.clock(settings).now(), stop=stop)
    click.echo("stopped", err=True)
