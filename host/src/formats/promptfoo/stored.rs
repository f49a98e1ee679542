//! promptfoo's `options.storeOutputAs`: a test's answer becomes a var of
//! every case after it. promptfoo then runs the config's cases one at a
//! time, in its order (tests, then providers, then prompts), each with the
//! vars stored so far over its own; here they form one group run in turn
//! ([`crate::job::Order::InTurn`]), each case's job made again from the
//! stored vars when its turn comes.

use super::{PromptfooCase, Suite};
use crate::check::KeySet;
use crate::job::{CaseGroup, InGroup, InTurn, Job, Order};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The group of a config's cases and each case's place in it by id, made
/// when the first of them is read.
pub type Slot = Arc<OnceLock<Result<(Arc<CaseGroup>, HashMap<String, usize>), String>>>;

/// Whether a test of `suite`'s config stores its output.
pub fn uses(suite: &Suite) -> bool {
    suite.config.tests.iter().any(|test| stores_as(&test.options).is_some())
}

/// The var a test's `options` store its output as.
fn stores_as(options: &Map<String, Value>) -> Option<&str> {
    options.get("storeOutputAs").and_then(Value::as_str)
}

/// Every case of the config, in promptfoo's order: (id, prompt, provider,
/// test).
fn in_promptfoos_order(suite: &Suite) -> Vec<(String, usize, usize, usize)> {
    let mut cases: Vec<(String, usize, usize, usize)> =
        suite.cases.iter().map(|(id, &(prompt, provider, test))| (id.clone(), prompt, provider, test)).collect();
    cases.sort_by_key(|&(_, prompt, provider, test)| (test, provider, prompt));
    cases
}

/// The cases run in turn.
struct Turns {
    suite: Arc<Suite>,
    cases: Vec<(String, usize, usize, usize)>,
}

impl Turns {
    fn case(&self, member: usize) -> PromptfooCase {
        let (id, prompt, provider, test) = self.cases[member].clone();
        PromptfooCase { id, suite: self.suite.clone(), prompt, provider, test, in_turn: None }
    }
}

impl InTurn for Turns {
    fn job(&self, member: usize, stored: &Map<String, Value>, keys: &dyn KeySet) -> Result<Job, String> {
        let case = self.case(member);
        let mut test = self.suite.config.tests[case.test].clone();
        // promptfoo assigns the stored vars over the test's own.
        test.vars.extend(stored.iter().map(|(name, value)| (name.clone(), value.clone())));
        case.own_job_for(&test, keys)
    }

    fn stores_as(&self, member: usize) -> Option<&str> {
        stores_as(&self.suite.config.tests[self.cases[member].3].options)
    }
}

/// The place of `case` in its config's group, made (with every case's job
/// as read, nothing stored yet) if this is the first case read.
pub(crate) fn place(case: &PromptfooCase, slot: &Slot, keys: &dyn KeySet) -> Result<InGroup, String> {
    // The order and the places are made once, with the group: sorting
    // every case per case would be quadratic in the config's size.
    let made = slot.get_or_init(|| {
        let cases = in_promptfoos_order(&case.suite);
        let places = cases.iter().enumerate().map(|(member, (id, ..))| (id.clone(), member)).collect();
        let turns = Turns { suite: case.suite.clone(), cases };
        let members = (0..turns.cases.len()).map(|member| turns.case(member).own_job(keys).map(Arc::new)).collect();
        let name = format!("the cases of {} (it stores outputs)", case.suite.id);
        Ok((Arc::new(CaseGroup::new(name, members, Order::InTurn(Box::new(turns)), Vec::new())), places))
    });
    let (group, places) = made.as_ref().map_err(String::clone)?;
    let member = *places.get(&case.id).expect("the case is one of its config's");
    Ok(InGroup { group: group.clone(), member })
}
