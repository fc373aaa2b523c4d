"""`prchain report`: an offline HTML site of the store (funnel, plots, chains, trajectories).

Entry point: `prchain.report.site.write_report`; `prchain.app.report` wires it to the config.
"""
