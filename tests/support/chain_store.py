"""Write hand-made PRs, files, patches and references straight into a store, for chain tests.

Each PR gets a real unified diff over its files (code and tests alike), so stage splitting and
export see realistic patches. Times step one day per PR number unless given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, insert

from prchain.chains.reading.cues import classify
from prchain.store.models import PRCommit, PRFile, PRPatch, PullRequest, Reference, Repo

T0 = datetime(2024, 1, 1)


def file_diff(path: str, number: int, lines: int = 1, rewrites: tuple[int, ...] = ()) -> str:
    """A diff adding `lines` distinct lines of code to `path` (what the substance rule reads), and
    removing the first line each PR of `rewrites` added there (what line lineage reads)."""
    body = "".join(f"+value_{number}_{i} = compute({number}, {i})\n" for i in range(lines))
    gone = "".join(f"-value_{older}_0 = compute({older}, 0)\n" for older in rewrites)
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{2 + len(rewrites)} +1,{2 + lines} @@\n line_one = 1\n{gone}{body} line_two = 2\n"
    )


@dataclass
class StoreBuilder:
    """Collects rows, then `write()` inserts them in bulk; ids are PR numbers offset per repo."""

    engine: Engine
    repo: str = "acme/calc"
    repo_id: int = 1
    clone_path: str | None = None
    prs: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    patches: list[dict[str, Any]] = field(default_factory=list)
    refs: list[dict[str, Any]] = field(default_factory=list)
    commits: list[dict[str, Any]] = field(default_factory=list)
    # A reference with dependency wording between PRs sharing a file: the newer PR rewrites one of
    # the older one's lines there, as real follow-ups do (the link rules want code evidence beside the wording).
    rewrite_shared: bool = True
    _layout: dict[int, tuple[list[str], int]] = field(default_factory=dict)

    def pr_id(self, number: int) -> int:
        return self.repo_id * 100_000 + number

    def pr(
        self,
        number: int,
        files: list[str] | None = None,
        *,
        author: str = "ada",
        day: float | None = None,
        created_day: float | None = None,
        title: str | None = None,
        body: str = "",
        lines: int = 20,
        **extra: Any,
    ) -> int:
        day = number if day is None else day
        paths = files if files is not None else [f"calc/mod{number}.py"]
        pr_id = self.pr_id(number)
        self.prs.append(
            {
                "id": pr_id,
                "repo_id": self.repo_id,
                "number": number,
                "title": title or f"Change {number}",
                "body": body,
                "state": "merged",
                "author": author,
                "created_at": T0
                + timedelta(days=created_day if created_day is not None else day - 0.5),
                "merged_at": T0 + timedelta(days=day),
                "base_sha": f"{number:040x}",
                "merge_commit_sha": f"{number + 9000:040x}",
                "additions": lines * len(paths),
                "deletions": 0,
                "changed_files": len(paths),
                "patch_status": "ok",
                "source": "git",
                **extra,
            }
        )
        # `lines` per file is what the size and substance rules read, in the file rows and the diff.
        self.files += [
            {"pr_id": pr_id, "path": p, "additions": lines, "deletions": 0} for p in paths
        ]
        diff = "".join(file_diff(p, number, lines) for p in paths)
        self.patches.append({"pr_id": pr_id, "diff": diff, "size_bytes": len(diff)})
        self._layout[number] = (paths, lines)
        return pr_id

    def ref(
        self,
        src: int,
        dst: int,
        type: str = "mention",
        *,
        evidence: str | None = None,
        via_issue: int = 0,
        found_in: str = "body",
    ) -> None:
        self.refs.append(
            {
                "repo_id": self.repo_id,
                "src_pr_id": self.pr_id(src),
                "target_repo": self.repo,
                "target_number": dst,
                "target_kind": "pr",
                "target_pr_id": self.pr_id(dst),
                "type": type,
                "found_in": found_in,
                "via_issue": via_issue,
                "evidence": evidence if evidence is not None else f"see #{dst}",
            }
        )

    def issue_ref(self, src: int, issue: int, evidence: str, type: str = "mention") -> None:
        """PR `src` names issue `issue` (no PR of the store), in `evidence`."""
        self.refs.append(
            {
                "repo_id": self.repo_id,
                "src_pr_id": self.pr_id(src),
                "target_repo": self.repo,
                "target_number": issue,
                "target_kind": "issue",
                "target_pr_id": None,
                "type": type,
                "found_in": "body",
                "via_issue": 0,
                "evidence": evidence,
            }
        )

    def commit(self, number: int, sha: str, message: str = "Work") -> None:
        """A commit of PR `number`'s branch (the same sha may be given to several PRs)."""
        self.commits.append(
            {"pr_id": self.pr_id(number), "sha": sha.ljust(40, "0"), "message": message}
        )

    def _rewrite_shared_lines(self) -> None:
        """Give each referring PR's diff the lineage described at `rewrite_shared`; a patch a test
        set by hand is left alone."""
        by_day = {pr["number"]: pr["merged_at"] for pr in self.prs}
        rewrites: dict[int, set[int]] = {}
        for ref in self.refs:
            if classify(ref["type"], ref["evidence"], ref["target_number"])[0] != "strong":
                continue
            a, b = ref["src_pr_id"] - self.repo_id * 100_000, ref["target_number"]
            if a not in self._layout or b not in self._layout or a == b:
                continue
            newer, older = (a, b) if by_day[b] <= by_day[a] else (b, a)
            rewrites.setdefault(newer, set()).add(older)
        for patch in self.patches:
            number = patch["pr_id"] - self.repo_id * 100_000
            paths, lines = self._layout.get(number, ([], 0))
            if number not in rewrites or patch["diff"] != "".join(
                file_diff(p, number, lines) for p in paths
            ):
                continue
            diff = "".join(
                file_diff(
                    p,
                    number,
                    lines,
                    tuple(sorted(o for o in rewrites[number] if p in self._layout[o][0])),
                )
                for p in paths
            )
            patch.update(diff=diff, size_bytes=len(diff))

    def write(self) -> None:
        if self.rewrite_shared:
            self._rewrite_shared_lines()
        repo = {
            "id": self.repo_id,
            "full_name": self.repo,
            "source": "git",
            "default_branch": "main",
            "clone_path": self.clone_path,
        }
        with self.engine.begin() as conn:
            conn.execute(insert(Repo), [repo])
            for model, rows in (
                (PullRequest, self.prs),
                (PRFile, self.files),
                (PRPatch, self.patches),
                (Reference, self.refs),
                (PRCommit, self.commits),
            ):
                if rows:
                    conn.execute(insert(model), rows)
