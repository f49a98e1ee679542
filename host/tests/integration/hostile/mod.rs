//! Hostile input and the invariants under it: hostile agents, plugins, fixtures, case files and memory; sleeping guests, slow agents, size caps, fuzzing, secrets and the trust boundary.

pub mod fuzz;
pub mod hostile_agent;
pub mod hostile_cases;
pub mod hostile_check;
pub mod hostile_fixtures;
pub mod hostile_memory;
pub mod hostile_support;
pub mod hostile_wat;
pub mod secrets;
pub mod size_caps;
pub mod sleeping_guests;
pub mod slow_agents;
pub mod trust;
