//! Status conditions, kept the way apimachinery's `meta.SetStatusCondition` keeps them, and the
//! events that announce their transitions.
//!
//! A controller builds the conditions it wants with [`new`] and hands its status to
//! [`Reconciler::write_status`](super::Reconciler::write_status), which lets [`carry_over`] keep
//! each current `lastTransitionTime` and find the transitions, writes the status when anything
//! changed, and then publishes [`transition_event`] for each transition.
//!
//! ```
//! use rsop_runtime::controller::conditions::{self, Change};
//!
//! let current = vec![conditions::new("Ready", true, "Reconciled", "All good", Some(1))];
//! let mut again = conditions::new("Ready", true, "Reconciled", "All good", Some(1));
//! // Nothing changed: the condition keeps the time its status last flipped.
//! assert_eq!(conditions::compare(&current, &mut again), Change::None);
//! assert_eq!(again.last_transition_time, current[0].last_transition_time);
//! let mut failed = conditions::new("Ready", false, "ReconcileFailed", "The API server refused", Some(1));
//! assert_eq!(conditions::compare(&current, &mut failed), Change::Transition);
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::events::{Event, EventType};
use serde_json::Value;

/// The Kubernetes API limit on `Event.note`, in bytes.
const MAX_EVENT_NOTE_BYTES: usize = 1024;

/// A condition of `type_` with the given status, as of now.
pub fn new(
    type_: &str,
    status: bool,
    reason: &str,
    message: impl Into<String>,
    observed_generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        reason: reason.to_owned(),
        message: message.into(),
        observed_generation,
        last_transition_time: Time(Timestamp::now()),
    }
}

/// The condition of `type_` in `conditions`, if any.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// How a desired condition differs from the current one of the same type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Identical: nothing to write.
    None,
    /// Only the message or the observed generation changed: worth writing, not announcing.
    Updated,
    /// New, or its status or reason changed: worth writing and announcing with an event.
    Transition,
}

/// Compares `desired` with the condition of its type in `current`.
///
/// Unless the status changes, `desired` takes over the current `lastTransitionTime`, which records
/// when the status last flipped, not when the condition was last computed.
pub fn compare(current: &[Condition], desired: &mut Condition) -> Change {
    let Some(current) = find(current, &desired.type_) else {
        return Change::Transition;
    };
    if current.status != desired.status {
        return Change::Transition;
    }
    desired.last_transition_time = current.last_transition_time.clone();
    if current.reason != desired.reason {
        Change::Transition
    } else if current == desired {
        Change::None
    } else {
        Change::Updated
    }
}

/// Carries the `lastTransitionTime` of each condition of `current` over to the condition of its
/// type in `desired` (both a status's `conditions`, as JSON) when it keeps its status, and returns
/// the conditions of `desired` that are transitions (see [`compare`]), to announce.
///
/// This is [`compare`] on a status of any type, which
/// [`Reconciler::write_status`](super::Reconciler::write_status) serializes.
pub fn carry_over(current: &Value, desired: &mut Value) -> Vec<Condition> {
    let current: Vec<Condition> = serde_json::from_value(current.clone()).unwrap_or_default();
    let Some(desired) = desired.as_array_mut() else {
        return Vec::new();
    };
    let mut transitions = Vec::new();
    for entry in desired {
        let Ok(mut condition) = serde_json::from_value::<Condition>(entry.clone()) else {
            continue;
        };
        match compare(&current, &mut condition) {
            Change::Transition => transitions.push(condition),
            Change::Updated | Change::None => {
                if let Ok(time) = serde_json::to_value(&condition.last_transition_time) {
                    entry["lastTransitionTime"] = time;
                }
            }
        }
    }
    transitions
}

/// The event announcing that `condition` took its current status and reason.
///
/// Reason and note come from the condition, so `kubectl describe` tells the same story as the
/// status; the note is cut to the 1 KiB the API server accepts.
pub fn transition_event(condition: &Condition, type_: EventType) -> Event {
    let mut note = format!(
        "{} is {}: {}",
        condition.type_, condition.status, condition.message
    );
    if note.len() > MAX_EVENT_NOTE_BYTES {
        let mut end = MAX_EVENT_NOTE_BYTES;
        while !note.is_char_boundary(end) {
            end -= 1;
        }
        note.truncate(end);
    }
    Event {
        type_,
        reason: condition.reason.clone(),
        note: Some(note),
        action: "Reconcile".to_owned(),
        secondary: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).unwrap())
    }

    fn ready(status: bool, reason: &str, message: &str, since: i64) -> Condition {
        Condition {
            last_transition_time: at(since),
            ..new("Ready", status, reason, message, Some(1))
        }
    }

    #[test]
    fn new_condition_is_a_transition() {
        let mut desired = ready(true, "Reconciled", "done", 100);
        assert_eq!(compare(&[], &mut desired), Change::Transition);
        assert_eq!(desired.last_transition_time, at(100));
    }

    #[test]
    fn identical_condition_keeps_its_transition_time() {
        let current = [ready(true, "Reconciled", "done", 100)];
        let mut desired = ready(true, "Reconciled", "done", 200);
        assert_eq!(compare(&current, &mut desired), Change::None);
        assert_eq!(desired, current[0]);
    }

    #[test]
    fn new_message_or_generation_is_an_update_not_a_transition() {
        let current = [ready(true, "Reconciled", "done", 100)];
        let mut desired = ready(true, "Reconciled", "done again", 200);
        assert_eq!(compare(&current, &mut desired), Change::Updated);
        assert_eq!(desired.last_transition_time, at(100));

        let mut desired = Condition {
            observed_generation: Some(2),
            ..ready(true, "Reconciled", "done", 200)
        };
        assert_eq!(compare(&current, &mut desired), Change::Updated);
    }

    #[test]
    fn new_reason_is_a_transition_that_keeps_the_transition_time() {
        let current = [ready(false, "Pending", "waiting", 100)];
        let mut desired = ready(false, "Failed", "gave up", 200);
        assert_eq!(compare(&current, &mut desired), Change::Transition);
        assert_eq!(desired.last_transition_time, at(100));
    }

    #[test]
    fn new_status_is_a_transition_at_the_new_time() {
        let current = [
            Condition {
                type_: "Other".into(),
                ..ready(true, "Fine", "", 50)
            },
            ready(false, "Pending", "waiting", 100),
        ];
        let mut desired = ready(true, "Reconciled", "done", 200);
        assert_eq!(compare(&current, &mut desired), Change::Transition);
        assert_eq!(desired.last_transition_time, at(200));
    }

    #[test]
    fn event_tells_the_condition_and_fits_the_api_limit() {
        let event = transition_event(&ready(false, "Failed", "no luck", 0), EventType::Warning);
        assert_eq!(event.type_, EventType::Warning);
        assert_eq!(event.reason, "Failed");
        assert_eq!(event.note.as_deref(), Some("Ready is False: no luck"));

        // Multi-byte characters straddle the limit: the cut must fall between two of them.
        let event = transition_event(
            &ready(false, "Failed", &"é".repeat(600), 0),
            EventType::Warning,
        );
        let note = event.note.unwrap();
        assert!(note.len() <= MAX_EVENT_NOTE_BYTES);
        assert!(note.len() > MAX_EVENT_NOTE_BYTES - 2);
    }
}
