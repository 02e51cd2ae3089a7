//! What every Plan door shares beyond its policy: bodies (the Plan's field-map 400, agent
//! attribution), idempotency keys, dry runs, answers.
