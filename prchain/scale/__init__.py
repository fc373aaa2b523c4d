"""Where the work of a run executes: threads on this machine, or tasks on a Ray cluster.

Callers hand a backend one picklable piece of work and the items to apply it to (chains, repos);
the backend decides where each call runs and reports which node ran it. Backends are registered by
name (`prchain.scale.backends.BACKENDS`), so another one (Kubernetes jobs) needs no caller changes.
Ray is an optional extra (`pip install 'prchain[ray]'`) and is imported only when it is chosen.
"""
