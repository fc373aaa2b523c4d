-- Generated from prchain/store/models by `python -m prchain.store.schema`; do not edit by hand.

CREATE TABLE chain_builds (
	id INTEGER NOT NULL, 
	strategy VARCHAR(40) NOT NULL, 
	chains INTEGER NOT NULL, 
	rules JSON NOT NULL, 
	graph JSON, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_chain_builds PRIMARY KEY (id)
);

CREATE INDEX ix_chain_builds_strategy ON chain_builds (strategy);

CREATE TABLE llm_cache (
	cache_key VARCHAR(64) NOT NULL, 
	role VARCHAR(40) NOT NULL, 
	model VARCHAR(200) NOT NULL, 
	response JSON NOT NULL, 
	valid BOOLEAN NOT NULL, 
	error TEXT, 
	scrubbed_chars INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_llm_cache PRIMARY KEY (cache_key)
);

CREATE TABLE llm_calls (
	id INTEGER NOT NULL, 
	role VARCHAR(40) NOT NULL, 
	model VARCHAR(200) NOT NULL, 
	prompt_tokens INTEGER NOT NULL, 
	completion_tokens INTEGER NOT NULL, 
	latency_ms DOUBLE NOT NULL, 
	cost_usd DOUBLE NOT NULL, 
	cache_key VARCHAR(64) NOT NULL, 
	cached BOOLEAN NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	error TEXT, 
	rollout_id INTEGER, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_llm_calls PRIMARY KEY (id)
);

CREATE INDEX ix_llm_calls_cache_key ON llm_calls (cache_key);

CREATE INDEX ix_llm_calls_created_at ON llm_calls (created_at);

CREATE INDEX ix_llm_calls_role ON llm_calls (role);

CREATE INDEX ix_llm_calls_rollout_id ON llm_calls (rollout_id);

CREATE TABLE llm_repairs (
	id INTEGER NOT NULL, 
	role VARCHAR(40) NOT NULL, 
	kind VARCHAR(40) NOT NULL, 
	detail TEXT, 
	rollout_id INTEGER, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_llm_repairs PRIMARY KEY (id)
);

CREATE INDEX ix_llm_repairs_role ON llm_repairs (role);

CREATE INDEX ix_llm_repairs_rollout_id ON llm_repairs (rollout_id);

CREATE TABLE repos (
	id INTEGER NOT NULL, 
	full_name VARCHAR(200) NOT NULL, 
	source VARCHAR(20) NOT NULL, 
	default_branch VARCHAR(200), 
	clone_path TEXT, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_repos PRIMARY KEY (id), 
	CONSTRAINT uq_repos_full_name UNIQUE (full_name)
);

CREATE TABLE work_leases (
	kind VARCHAR(40) NOT NULL, 
	"key" VARCHAR(200) NOT NULL, 
	owner VARCHAR(200) NOT NULL, 
	heartbeat_at DATETIME NOT NULL, 
	acquired_at DATETIME NOT NULL, 
	CONSTRAINT pk_work_leases PRIMARY KEY (kind, "key")
);

CREATE TABLE chains (
	id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	strategy VARCHAR(40) NOT NULL, 
	signature VARCHAR(400) NOT NULL, 
	length INTEGER NOT NULL, 
	score DOUBLE NOT NULL, 
	edges JSON NOT NULL, 
	overview TEXT, 
	label VARCHAR(40), 
	created_at DATETIME NOT NULL, 
	superseded_at DATETIME, 
	CONSTRAINT pk_chains PRIMARY KEY (id), 
	CONSTRAINT uq_chains_strategy_signature UNIQUE (strategy, signature), 
	CONSTRAINT fk_chains_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE
);

CREATE INDEX ix_chains_repo_id ON chains (repo_id);

CREATE TABLE env_recipes (
	id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	era_key VARCHAR(64) NOT NULL, 
	ecosystem VARCHAR(20) NOT NULL, 
	era_date VARCHAR(32) NOT NULL, 
	base_sha VARCHAR(64) NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	method VARCHAR(20) NOT NULL, 
	variant TEXT NOT NULL, 
	suite VARCHAR(20) NOT NULL, 
	interpreter VARCHAR(20) NOT NULL, 
	cutoff VARCHAR(32) NOT NULL, 
	commands JSON NOT NULL, 
	test_command TEXT NOT NULL, 
	setup_command TEXT NOT NULL, 
	image TEXT NOT NULL, 
	image_bytes INTEGER NOT NULL, 
	verification JSON NOT NULL, 
	root_error TEXT NOT NULL, 
	notes JSON NOT NULL, 
	cost DOUBLE NOT NULL, 
	build_seconds DOUBLE NOT NULL, 
	verify_seconds DOUBLE NOT NULL, 
	log TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_env_recipes PRIMARY KEY (id), 
	CONSTRAINT uq_env_recipes_repo_id_era_key UNIQUE (repo_id, era_key), 
	CONSTRAINT fk_env_recipes_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE
);

CREATE INDEX ix_env_recipes_repo_id ON env_recipes (repo_id);

CREATE TABLE issues (
	id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	number INTEGER NOT NULL, 
	title TEXT NOT NULL, 
	body TEXT NOT NULL, 
	state VARCHAR(20) NOT NULL, 
	author VARCHAR(200), 
	created_at DATETIME, 
	closed_at DATETIME, 
	CONSTRAINT pk_issues PRIMARY KEY (id), 
	CONSTRAINT uq_issues_repo_id_number UNIQUE (repo_id, number), 
	CONSTRAINT fk_issues_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE
);

CREATE TABLE mine_runs (
	id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	source VARCHAR(20) NOT NULL, 
	prs INTEGER NOT NULL, 
	requests INTEGER NOT NULL, 
	points INTEGER NOT NULL, 
	seconds DOUBLE NOT NULL, 
	finished_at DATETIME NOT NULL, 
	CONSTRAINT pk_mine_runs PRIMARY KEY (id), 
	CONSTRAINT fk_mine_runs_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE
);

CREATE TABLE pull_requests (
	id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	number INTEGER NOT NULL, 
	title TEXT NOT NULL, 
	body TEXT NOT NULL, 
	state VARCHAR(20) NOT NULL, 
	author VARCHAR(200), 
	created_at DATETIME, 
	merged_at DATETIME, 
	closed_at DATETIME, 
	updated_at DATETIME, 
	base_ref VARCHAR(200), 
	base_sha VARCHAR(64), 
	head_sha VARCHAR(64), 
	merge_commit_sha VARCHAR(64), 
	additions INTEGER NOT NULL, 
	deletions INTEGER NOT NULL, 
	changed_files INTEGER NOT NULL, 
	patch_status VARCHAR(20) NOT NULL, 
	source VARCHAR(20) NOT NULL, 
	CONSTRAINT pk_pull_requests PRIMARY KEY (id), 
	CONSTRAINT uq_pull_requests_repo_id_number UNIQUE (repo_id, number), 
	CONSTRAINT fk_pull_requests_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE
);

CREATE INDEX ix_pull_requests_repo_id_merged_at ON pull_requests (repo_id, merged_at);

CREATE TABLE sync_cursors (
	repo_id INTEGER NOT NULL, 
	source VARCHAR(20) NOT NULL, 
	kind VARCHAR(40) NOT NULL, 
	value TEXT NOT NULL, 
	updated_at DATETIME NOT NULL, 
	CONSTRAINT pk_sync_cursors PRIMARY KEY (repo_id, source, kind), 
	CONSTRAINT fk_sync_cursors_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE
);

CREATE TABLE chain_links (
	id INTEGER NOT NULL, 
	build_id INTEGER, 
	repo_id INTEGER NOT NULL, 
	newer_pr_id INTEGER NOT NULL, 
	older_pr_id INTEGER NOT NULL, 
	kept BOOLEAN NOT NULL, 
	rule VARCHAR(60), 
	evidence_class VARCHAR(20), 
	cue TEXT, 
	strength INTEGER NOT NULL, 
	overlap DOUBLE, 
	gap_days DOUBLE, 
	lineage INTEGER NOT NULL, 
	lineage_via VARCHAR(20), 
	lineage_moved INTEGER DEFAULT '0' NOT NULL, 
	symbols INTEGER, 
	drop_kind VARCHAR(8), 
	rescued_from VARCHAR(60), 
	why TEXT NOT NULL, 
	evidence JSON NOT NULL, 
	CONSTRAINT pk_chain_links PRIMARY KEY (id), 
	CONSTRAINT uq_chain_links_newer_pr_id_older_pr_id UNIQUE (newer_pr_id, older_pr_id), 
	CONSTRAINT fk_chain_links_build_id_chain_builds FOREIGN KEY(build_id) REFERENCES chain_builds (id) ON DELETE SET NULL, 
	CONSTRAINT fk_chain_links_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE, 
	CONSTRAINT fk_chain_links_newer_pr_id_pull_requests FOREIGN KEY(newer_pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE, 
	CONSTRAINT fk_chain_links_older_pr_id_pull_requests FOREIGN KEY(older_pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE INDEX ix_chain_links_build_id ON chain_links (build_id);

CREATE INDEX ix_chain_links_drop_kind ON chain_links (drop_kind);

CREATE INDEX ix_chain_links_newer_pr_id ON chain_links (newer_pr_id);

CREATE INDEX ix_chain_links_older_pr_id ON chain_links (older_pr_id);

CREATE INDEX ix_chain_links_repo_id ON chain_links (repo_id);

CREATE INDEX ix_chain_links_rule ON chain_links (rule);

CREATE TABLE chain_stages (
	id INTEGER NOT NULL, 
	chain_id INTEGER NOT NULL, 
	idx INTEGER NOT NULL, 
	pr_id INTEGER NOT NULL, 
	base_sha VARCHAR(64), 
	end_sha VARCHAR(64), 
	gold_patch TEXT NOT NULL, 
	gold_test_patch TEXT NOT NULL, 
	tests_from INTEGER, 
	entry VARCHAR(20) DEFAULT 'revert' NOT NULL, 
	"query" TEXT, 
	query_attempts INTEGER NOT NULL, 
	query_leaks JSON NOT NULL, 
	CONSTRAINT pk_chain_stages PRIMARY KEY (id), 
	CONSTRAINT uq_chain_stages_chain_id_idx UNIQUE (chain_id, idx), 
	CONSTRAINT fk_chain_stages_chain_id_chains FOREIGN KEY(chain_id) REFERENCES chains (id) ON DELETE CASCADE, 
	CONSTRAINT fk_chain_stages_pr_id_pull_requests FOREIGN KEY(pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE INDEX ix_chain_stages_chain_id ON chain_stages (chain_id);

CREATE TABLE comments (
	id INTEGER NOT NULL, 
	pr_id INTEGER NOT NULL, 
	kind VARCHAR(20) NOT NULL, 
	external_id VARCHAR(100) NOT NULL, 
	author VARCHAR(200), 
	body TEXT NOT NULL, 
	path TEXT, 
	created_at DATETIME, 
	CONSTRAINT pk_comments PRIMARY KEY (id), 
	CONSTRAINT uq_comments_pr_id_kind_external_id UNIQUE (pr_id, kind, external_id), 
	CONSTRAINT fk_comments_pr_id_pull_requests FOREIGN KEY(pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE INDEX ix_comments_pr_id ON comments (pr_id);

CREATE TABLE link_verdicts (
	id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	newer_pr_id INTEGER NOT NULL, 
	older_pr_id INTEGER NOT NULL, 
	verdict VARCHAR(20) NOT NULL, 
	reason TEXT NOT NULL, 
	older_thin BOOLEAN DEFAULT 0 NOT NULL, 
	newer_thin BOOLEAN DEFAULT 0 NOT NULL, 
	model VARCHAR(200) NOT NULL, 
	prompt_version VARCHAR(16) NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_link_verdicts PRIMARY KEY (id), 
	CONSTRAINT uq_link_verdicts_newer_pr_id_older_pr_id UNIQUE (newer_pr_id, older_pr_id), 
	CONSTRAINT fk_link_verdicts_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE, 
	CONSTRAINT fk_link_verdicts_newer_pr_id_pull_requests FOREIGN KEY(newer_pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE, 
	CONSTRAINT fk_link_verdicts_older_pr_id_pull_requests FOREIGN KEY(older_pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE INDEX ix_link_verdicts_newer_pr_id ON link_verdicts (newer_pr_id);

CREATE INDEX ix_link_verdicts_older_pr_id ON link_verdicts (older_pr_id);

CREATE INDEX ix_link_verdicts_repo_id ON link_verdicts (repo_id);

CREATE TABLE p2t_graphs (
	id INTEGER NOT NULL, 
	chain_id INTEGER NOT NULL, 
	stage_idx INTEGER NOT NULL, 
	graph JSON NOT NULL, 
	rounds INTEGER NOT NULL, 
	stop_reason VARCHAR(20) NOT NULL, 
	pruned JSON NOT NULL, 
	feedback JSON NOT NULL, 
	missing_artifacts JSON NOT NULL, 
	cost_usd DOUBLE NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_p2t_graphs PRIMARY KEY (id), 
	CONSTRAINT uq_p2t_graphs_chain_id_stage_idx UNIQUE (chain_id, stage_idx), 
	CONSTRAINT fk_p2t_graphs_chain_id_chains FOREIGN KEY(chain_id) REFERENCES chains (id) ON DELETE CASCADE
);

CREATE INDEX ix_p2t_graphs_chain_id ON p2t_graphs (chain_id);

CREATE TABLE pair_evidence (
	id INTEGER NOT NULL, 
	newer_pr_id INTEGER NOT NULL, 
	older_pr_id INTEGER NOT NULL, 
	kind VARCHAR(40) NOT NULL, 
	version VARCHAR(20) NOT NULL, 
	value JSON NOT NULL, 
	CONSTRAINT pk_pair_evidence PRIMARY KEY (id), 
	CONSTRAINT uq_pair_evidence_newer_pr_id_older_pr_id_kind UNIQUE (newer_pr_id, older_pr_id, kind), 
	CONSTRAINT fk_pair_evidence_newer_pr_id_pull_requests FOREIGN KEY(newer_pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE, 
	CONSTRAINT fk_pair_evidence_older_pr_id_pull_requests FOREIGN KEY(older_pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE INDEX ix_pair_evidence_older_pr_id ON pair_evidence (older_pr_id);

CREATE TABLE pr_commits (
	id INTEGER NOT NULL, 
	pr_id INTEGER NOT NULL, 
	sha VARCHAR(64) NOT NULL, 
	message TEXT NOT NULL, 
	author VARCHAR(200), 
	authored_at DATETIME, 
	CONSTRAINT pk_pr_commits PRIMARY KEY (id), 
	CONSTRAINT uq_pr_commits_pr_id_sha UNIQUE (pr_id, sha), 
	CONSTRAINT fk_pr_commits_pr_id_pull_requests FOREIGN KEY(pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE INDEX ix_pr_commits_pr_id ON pr_commits (pr_id);

CREATE TABLE pr_files (
	id INTEGER NOT NULL, 
	pr_id INTEGER NOT NULL, 
	path TEXT NOT NULL, 
	previous_path TEXT, 
	status VARCHAR(20) NOT NULL, 
	additions INTEGER NOT NULL, 
	deletions INTEGER NOT NULL, 
	is_binary BOOLEAN NOT NULL, 
	CONSTRAINT pk_pr_files PRIMARY KEY (id), 
	CONSTRAINT uq_pr_files_pr_id_path UNIQUE (pr_id, path), 
	CONSTRAINT fk_pr_files_pr_id_pull_requests FOREIGN KEY(pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE INDEX ix_pr_files_pr_id ON pr_files (pr_id);

CREATE TABLE pr_patches (
	pr_id INTEGER NOT NULL, 
	diff TEXT NOT NULL, 
	size_bytes INTEGER NOT NULL, 
	CONSTRAINT pk_pr_patches PRIMARY KEY (pr_id), 
	CONSTRAINT fk_pr_patches_pr_id_pull_requests FOREIGN KEY(pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE
);

CREATE TABLE pr_references (
	id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	src_pr_id INTEGER NOT NULL, 
	target_repo VARCHAR(200) NOT NULL, 
	target_number INTEGER NOT NULL, 
	target_kind VARCHAR(20) NOT NULL, 
	target_pr_id INTEGER, 
	type VARCHAR(20) NOT NULL, 
	found_in VARCHAR(20) NOT NULL, 
	via_issue INTEGER NOT NULL, 
	evidence TEXT NOT NULL, 
	CONSTRAINT pk_pr_references PRIMARY KEY (id), 
	CONSTRAINT uq_pr_references_src_pr_id_target_repo_target_number_type_found_in_via_issue UNIQUE (src_pr_id, target_repo, target_number, type, found_in, via_issue), 
	CONSTRAINT fk_pr_references_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE, 
	CONSTRAINT fk_pr_references_src_pr_id_pull_requests FOREIGN KEY(src_pr_id) REFERENCES pull_requests (id) ON DELETE CASCADE, 
	CONSTRAINT fk_pr_references_target_pr_id_pull_requests FOREIGN KEY(target_pr_id) REFERENCES pull_requests (id) ON DELETE SET NULL
);

CREATE INDEX ix_pr_references_repo_id_target_number ON pr_references (repo_id, target_number);

CREATE INDEX ix_pr_references_src_pr_id ON pr_references (src_pr_id);

CREATE TABLE rollouts (
	id INTEGER NOT NULL, 
	chain_id INTEGER NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	reason TEXT, 
	source VARCHAR(10) DEFAULT 'agent' NOT NULL, 
	conflict_policy VARCHAR(20) NOT NULL, 
	keep_policy VARCHAR(20) NOT NULL, 
	prm_variant VARCHAR(10), 
	kept_stages INTEGER NOT NULL, 
	models JSON NOT NULL, 
	config JSON NOT NULL, 
	action_format VARCHAR(10) NOT NULL, 
	prompt_hash VARCHAR(64) NOT NULL, 
	tool_schema_hash VARCHAR(64) NOT NULL, 
	prompt_tokens INTEGER NOT NULL, 
	completion_tokens INTEGER NOT NULL, 
	trajectory_tokens INTEGER NOT NULL, 
	agent_steps INTEGER NOT NULL, 
	tool_calls INTEGER NOT NULL, 
	cost_usd DOUBLE NOT NULL, 
	started_at DATETIME NOT NULL, 
	finished_at DATETIME, 
	CONSTRAINT pk_rollouts PRIMARY KEY (id), 
	CONSTRAINT fk_rollouts_chain_id_chains FOREIGN KEY(chain_id) REFERENCES chains (id) ON DELETE CASCADE
);

CREATE INDEX ix_rollouts_chain_id ON rollouts (chain_id);

CREATE TABLE env_transitions (
	id INTEGER NOT NULL, 
	rollout_id INTEGER NOT NULL, 
	stage_idx INTEGER NOT NULL, 
	base_sha VARCHAR(64) NOT NULL, 
	policy VARCHAR(20) NOT NULL, 
	outcome VARCHAR(20) NOT NULL, 
	reverted JSON NOT NULL, 
	applied BOOLEAN NOT NULL, 
	rejected_hunks TEXT NOT NULL, 
	revert_failed JSON NOT NULL, 
	revert_rejected_hunks TEXT NOT NULL, 
	carried_bytes INTEGER NOT NULL, 
	entry VARCHAR(20) DEFAULT 'revert' NOT NULL, 
	stage_base VARCHAR(64) NOT NULL, 
	stage_start VARCHAR(64) NOT NULL, 
	seconds DOUBLE NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_env_transitions PRIMARY KEY (id), 
	CONSTRAINT uq_env_transitions_rollout_id_stage_idx UNIQUE (rollout_id, stage_idx), 
	CONSTRAINT fk_env_transitions_rollout_id_rollouts FOREIGN KEY(rollout_id) REFERENCES rollouts (id) ON DELETE CASCADE
);

CREATE INDEX ix_env_transitions_rollout_id ON env_transitions (rollout_id);

CREATE TABLE judgements (
	id INTEGER NOT NULL, 
	rollout_id INTEGER NOT NULL, 
	stage_idx INTEGER NOT NULL, 
	round INTEGER NOT NULL, 
	score DOUBLE NOT NULL, 
	comment TEXT NOT NULL, 
	passed BOOLEAN NOT NULL, 
	attempts INTEGER NOT NULL, 
	redacted BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_judgements PRIMARY KEY (id), 
	CONSTRAINT uq_judgements_rollout_id_stage_idx_round UNIQUE (rollout_id, stage_idx, round), 
	CONSTRAINT fk_judgements_rollout_id_rollouts FOREIGN KEY(rollout_id) REFERENCES rollouts (id) ON DELETE CASCADE
);

CREATE INDEX ix_judgements_rollout_id ON judgements (rollout_id);

CREATE TABLE p2t_stages (
	id INTEGER NOT NULL, 
	rollout_id INTEGER NOT NULL, 
	stage_idx INTEGER NOT NULL, 
	graph_id INTEGER, 
	admitted BOOLEAN NOT NULL, 
	reason TEXT NOT NULL, 
	established JSON NOT NULL, 
	coverage DOUBLE NOT NULL, 
	windows JSON NOT NULL, 
	steps INTEGER NOT NULL, 
	response_tokens INTEGER NOT NULL, 
	redundant_view_fraction DOUBLE NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_p2t_stages PRIMARY KEY (id), 
	CONSTRAINT uq_p2t_stages_rollout_id_stage_idx UNIQUE (rollout_id, stage_idx), 
	CONSTRAINT fk_p2t_stages_rollout_id_rollouts FOREIGN KEY(rollout_id) REFERENCES rollouts (id) ON DELETE CASCADE, 
	CONSTRAINT fk_p2t_stages_graph_id_p2t_graphs FOREIGN KEY(graph_id) REFERENCES p2t_graphs (id) ON DELETE SET NULL
);

CREATE INDEX ix_p2t_stages_rollout_id ON p2t_stages (rollout_id);

CREATE TABLE prm_calls (
	id INTEGER NOT NULL, 
	rollout_id INTEGER NOT NULL, 
	stage_idx INTEGER NOT NULL, 
	step_idx INTEGER NOT NULL, 
	variant VARCHAR(10) NOT NULL, 
	model VARCHAR(200) NOT NULL, 
	window JSON NOT NULL, 
	verdict JSON, 
	task_status VARCHAR(30), 
	status VARCHAR(20) NOT NULL, 
	error TEXT, 
	attempts INTEGER NOT NULL, 
	injected BOOLEAN NOT NULL, 
	prompt_tokens INTEGER NOT NULL, 
	completion_tokens INTEGER NOT NULL, 
	cost_usd DOUBLE NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_prm_calls PRIMARY KEY (id), 
	CONSTRAINT uq_prm_calls_rollout_id_step_idx UNIQUE (rollout_id, step_idx), 
	CONSTRAINT fk_prm_calls_rollout_id_rollouts FOREIGN KEY(rollout_id) REFERENCES rollouts (id) ON DELETE CASCADE
);

CREATE INDEX ix_prm_calls_rollout_id ON prm_calls (rollout_id);

CREATE TABLE rollout_stages (
	id INTEGER NOT NULL, 
	rollout_id INTEGER NOT NULL, 
	stage_idx INTEGER NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	reason TEXT, 
	score DOUBLE, 
	rounds INTEGER NOT NULL, 
	stage_diff TEXT NOT NULL, 
	cumulative_diff TEXT NOT NULL, 
	carried_patch BLOB, 
	test_result JSON, 
	tests_passed BOOLEAN, 
	agent_steps INTEGER NOT NULL, 
	started_at DATETIME NOT NULL, 
	finished_at DATETIME, 
	CONSTRAINT pk_rollout_stages PRIMARY KEY (id), 
	CONSTRAINT uq_rollout_stages_rollout_id_stage_idx UNIQUE (rollout_id, stage_idx), 
	CONSTRAINT fk_rollout_stages_rollout_id_rollouts FOREIGN KEY(rollout_id) REFERENCES rollouts (id) ON DELETE CASCADE
);

CREATE INDEX ix_rollout_stages_rollout_id ON rollout_stages (rollout_id);

CREATE TABLE stage_eras (
	chain_stage_id INTEGER NOT NULL, 
	repo_id INTEGER NOT NULL, 
	era_key VARCHAR(64) NOT NULL, 
	base_sha VARCHAR(64) NOT NULL, 
	CONSTRAINT pk_stage_eras PRIMARY KEY (chain_stage_id), 
	CONSTRAINT fk_stage_eras_chain_stage_id_chain_stages FOREIGN KEY(chain_stage_id) REFERENCES chain_stages (id) ON DELETE CASCADE, 
	CONSTRAINT fk_stage_eras_repo_id_repos FOREIGN KEY(repo_id) REFERENCES repos (id) ON DELETE CASCADE
);

CREATE INDEX ix_stage_eras_era_key ON stage_eras (era_key);

CREATE INDEX ix_stage_eras_repo_id ON stage_eras (repo_id);

CREATE TABLE stage_verifications (
	id INTEGER NOT NULL, 
	chain_stage_id INTEGER NOT NULL, 
	recipe VARCHAR(64) NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	reason TEXT, 
	test_command TEXT NOT NULL, 
	test_files JSON NOT NULL, 
	fail_to_pass JSON NOT NULL, 
	pass_to_pass JSON NOT NULL, 
	flaky JSON NOT NULL, 
	gold_failing JSON NOT NULL, 
	runs JSON NOT NULL, 
	output_tail TEXT NOT NULL, 
	seconds DOUBLE NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_stage_verifications PRIMARY KEY (id), 
	CONSTRAINT uq_stage_verifications_chain_stage_id UNIQUE (chain_stage_id), 
	CONSTRAINT fk_stage_verifications_chain_stage_id_chain_stages FOREIGN KEY(chain_stage_id) REFERENCES chain_stages (id) ON DELETE CASCADE
);

CREATE INDEX ix_stage_verifications_recipe ON stage_verifications (recipe);

CREATE TABLE steps (
	id INTEGER NOT NULL, 
	rollout_id INTEGER NOT NULL, 
	stage_idx INTEGER NOT NULL, 
	idx INTEGER NOT NULL, 
	kind VARCHAR(20) NOT NULL, 
	message JSON NOT NULL, 
	tool_call JSON, 
	observation TEXT, 
	prompt_tokens INTEGER NOT NULL, 
	completion_tokens INTEGER NOT NULL, 
	latency_ms DOUBLE NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_steps PRIMARY KEY (id), 
	CONSTRAINT uq_steps_rollout_id_idx UNIQUE (rollout_id, idx), 
	CONSTRAINT fk_steps_rollout_id_rollouts FOREIGN KEY(rollout_id) REFERENCES rollouts (id) ON DELETE CASCADE
);

CREATE INDEX ix_steps_rollout_id ON steps (rollout_id);
