//! Plan routes: tasks.

use crate::policy::Routes;

/// This module's part of the route table.
pub fn declare(_r: &mut Routes<'_, '_>) {}
