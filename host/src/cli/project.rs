//! The flags every command shares, as the library's [`ProjectOptions`]: the
//! command line's only say in how a project is set up.

use super::args::{CaseEnvArgs, ProjectArgs, ServerArgs};
use crate::case::ALLOW_COMMANDS_VAR;
use crate::project::{Project, ProjectOptions, TrustedFiles};

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
        named_env_only: false,
        trusted_files: match case_env.is_some_and(|args| args.allow_commands) || allowed_by_environment() {
            true => TrustedFiles::Everything,
            false => TrustedFiles::Configured,
        },
        agent_url: server.and_then(|args| args.agent_url.clone()),
        agent_ca: server.and_then(|args| args.agent_ca.clone()),
        environment: None,
    }
}

/// Whether ASSAY_ALLOW_COMMANDS says to trust every file (`1`, `true`,
/// `yes`, `on`).
fn allowed_by_environment() -> bool {
    let value = std::env::var(ALLOW_COMMANDS_VAR).unwrap_or_default();
    matches!(value.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
}

/// Opens the project the flags describe. A component's first compile that
/// takes a while is announced on stderr.
pub fn open(
    project: &ProjectArgs,
    case_env: Option<&CaseEnvArgs>,
    server: Option<&ServerArgs>,
) -> Result<Project, crate::errors::ProjectError> {
    let project = Project::open(options(project, case_env, server))?;
    project.on_slow_compile(|notice| {
        let megabytes = notice.bytes as f64 / f64::from(1 << 20);
        eprintln!(
            "compiling {} ({megabytes:.1} MB) for its first use on this machine; the compile cache keeps it for \
             later runs (`assay plugins --precompile` does this ahead, e.g. in a CI image)",
            notice.what
        );
    });
    Ok(project)
}
