//! The flags every command shares, as the library's [`ProjectOptions`]: the
//! command line's only say in how a project is set up.

use super::args::{CaseEnvArgs, ProjectArgs, ServerArgs};
use assay::{Project, ProjectOptions};

/// The options the project, case-environment and server flags ask for.
pub fn options(project: &ProjectArgs, case_env: Option<&CaseEnvArgs>, server: Option<&ServerArgs>) -> ProjectOptions {
    ProjectOptions {
        config: project.config.clone(),
        plugins: project.plugins.clone(),
        agents: project.agents.clone(),
        cache_dir: project.cache_dir.clone(),
        allow_project_cache_dir: project.allow_project_cache_dir,
        no_cache: project.no_cache,
        no_answer_cache: project.no_judge_cache,
        allow_env: case_env.map(|args| args.allow_env.clone()).unwrap_or_default(),
        agent_url: server.and_then(|args| args.agent_url.clone()),
        agent_ca: server.and_then(|args| args.agent_ca.clone()),
        environment: None,
    }
}

/// Opens the project the flags describe.
pub fn open(
    project: &ProjectArgs,
    case_env: Option<&CaseEnvArgs>,
    server: Option<&ServerArgs>,
) -> Result<Project, assay::errors::ProjectError> {
    Project::open(options(project, case_env, server))
}
