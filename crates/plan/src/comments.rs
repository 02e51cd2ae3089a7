//! Plan: comments on tasks (one level of replies, mentions, edits by their author, soft
//! deletes) and their emoji reactions.

use serde_json::json;
use teamcomm_kernel::{Error, ErrorCode, OrgId, Page, PageRequest, UserId};
use teamcomm_org::User;
use uuid::Uuid;

use crate::actor::PlanActor;
use crate::model::{CommentId, Task, TaskRef};
use crate::ports::{Comment, CommentFilter, Reaction};
use crate::relations::{refuse_archived, social_event};
use crate::service::Plan;

/// The longest comment body, in characters.
pub const MAX_COMMENT_BODY: usize = 10_000;
/// The most different emojis one comment may carry.
pub const MAX_REACTION_EMOJIS: usize = 20;
/// The longest reaction, in characters (bytes of UTF-8 never exceed it: 8 code points).
pub const MAX_REACTION_CHARS: usize = 32;
/// The most code points of one reaction.
pub const MAX_REACTION_CODE_POINTS: usize = 8;

/// A comment as it is shown: its author and its reactions, summed per emoji.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentView {
    pub comment: Comment,
    /// `None` when a key without a person wrote it, or its author was deleted.
    pub author: Option<User>,
    pub reactions: Vec<ReactionSummary>,
}

/// One emoji on a comment: how many people, who, and whether the viewer is one of them.
#[derive(Debug, Clone, PartialEq)]
pub struct ReactionSummary {
    pub emoji: String,
    pub count: u64,
    pub users: Vec<User>,
    pub reacted: bool,
}

/// A reaction with the person who made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReactionView {
    pub reaction: Reaction,
    pub user: Option<User>,
}

/// The body of a comment: not blank, at most [`MAX_COMMENT_BODY`] characters
/// (`comment_body_too_long`).
pub fn check_comment_body(body: &str) -> Result<String, Error> {
    if body.trim().is_empty() {
        return Err(Error::invalid_field("body", "This field may not be blank."));
    }
    if body.chars().count() > MAX_COMMENT_BODY {
        return Err(Error::new(
            ErrorCode::CommentBodyTooLong,
            "A comment is at most 10,000 characters.",
        )
        .with_extra("max_length", MAX_COMMENT_BODY as u64));
    }
    Ok(body.to_owned())
}

/// The people a body mentions with `<@DB@uuid>`, each once, in the order written.
pub fn mentioned_ids(body: &str) -> Vec<UserId> {
    let mut ids = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("<@DB@") {
        rest = &rest[start + 5..];
        let Some(end) = rest.find('>') else { break };
        if let Ok(id) = Uuid::parse_str(&rest[..end]) {
            let id = UserId(id);
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        rest = &rest[end..];
    }
    ids
}

/// A reaction is one emoji: 1 to 8 code points of the pictographic blocks (U+1F300–1FAFF,
/// U+2600–27BF; skin tones are in the first), regional-indicator flags, keycaps (`1️⃣`), joined
/// by ZWJ and dressed with VS16; at most 32 characters (`reaction_invalid_emoji`).
pub fn check_emoji(raw: &str) -> Result<String, Error> {
    let refuse = || {
        Error::new(
            ErrorCode::ReactionInvalidEmoji,
            "A reaction is a single emoji of at most 32 characters.",
        )
    };
    let chars: Vec<char> = raw.chars().collect();
    if chars.is_empty()
        || chars.len() > MAX_REACTION_CODE_POINTS
        || raw.len() > MAX_REACTION_CHARS * 4
        || chars.len() > MAX_REACTION_CHARS
    {
        return Err(refuse());
    }
    let pictographic =
        |c: char| matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF | 0x1F1E6..=0x1F1FF);
    let joiner = |c: char| matches!(c as u32, 0xFE0F | 0x200D);
    let keycap = chars.len() >= 2
        && matches!(chars[0], '0'..='9' | '#' | '*')
        && chars.last() == Some(&'\u{20E3}')
        && chars[1..chars.len() - 1].iter().all(|c| *c == '\u{FE0F}');
    let valid = keycap
        || (chars.iter().any(|c| pictographic(*c))
            && chars.iter().all(|c| pictographic(*c) || joiner(*c))
            && !joiner(chars[0]));
    if valid {
        Ok(raw.to_owned())
    } else {
        Err(refuse())
    }
}

/// A reply names a comment of the same task that is not itself a reply.
fn check_parent(parent: &Comment, task: &Task) -> Result<(), Error> {
    if parent.task != task.id {
        return Err(Error::new(
            ErrorCode::InvalidRelation,
            "A reply must answer a comment of the same task.",
        ));
    }
    if parent.parent.is_some() {
        return Err(Error::new(
            ErrorCode::InvalidRelation,
            "Replies nest one level: answer the first comment instead.",
        ));
    }
    Ok(())
}

impl Plan {
    /// The active people of the organization a body mentions.
    async fn mentions_in(&self, org: OrgId, body: &str) -> Result<Vec<UserId>, Error> {
        let ids = mentioned_ids(body);
        let people = self.people(org, ids.iter().copied()).await?;
        Ok(ids
            .into_iter()
            .filter(|id| people.get(id).is_some_and(|u| u.is_active))
            .collect())
    }

    /// Comments with their authors and reactions, as `viewer` sees them.
    async fn comment_views(
        &self,
        org: OrgId,
        viewer: Option<UserId>,
        comments: Vec<Comment>,
    ) -> Result<Vec<CommentView>, Error> {
        let ids: Vec<CommentId> = comments.iter().map(|c| c.id).collect();
        let reactions = self.ports.social.reactions_on(org, &ids).await?;
        let people = self
            .people(
                org,
                comments
                    .iter()
                    .filter_map(|c| c.author)
                    .chain(reactions.iter().map(|r| r.user)),
            )
            .await?;
        Ok(comments
            .into_iter()
            .map(|comment| {
                let mut sums: Vec<ReactionSummary> = Vec::new();
                for r in reactions.iter().filter(|r| r.comment == comment.id) {
                    let i = match sums.iter().position(|s| s.emoji == r.emoji) {
                        Some(i) => i,
                        None => {
                            sums.push(ReactionSummary {
                                emoji: r.emoji.clone(),
                                count: 0,
                                users: Vec::new(),
                                reacted: false,
                            });
                            sums.len() - 1
                        }
                    };
                    let sum = &mut sums[i];
                    sum.count += 1;
                    sum.reacted |= Some(r.user) == viewer;
                    if let Some(user) = people.get(&r.user) {
                        sum.users.push(user.clone());
                    }
                }
                CommentView {
                    author: comment.author.and_then(|a| people.get(&a).cloned()),
                    comment,
                    reactions: sums,
                }
            })
            .collect())
    }

    async fn comment_view(
        &self,
        actor: &PlanActor,
        comment: Comment,
    ) -> Result<CommentView, Error> {
        let mut views = self
            .comment_views(actor.org_id(), actor.person_id(), vec![comment])
            .await?;
        Ok(views.remove(0))
    }

    /// A comment of the task, or 404.
    async fn task_comment(
        &self,
        actor: &PlanActor,
        task: &Task,
        id: CommentId,
    ) -> Result<Comment, Error> {
        let comment = self.ports.social.get_comment(actor.org_id(), id).await?;
        if comment.task != task.id {
            return Err(Error::not_found());
        }
        Ok(comment)
    }

    /// Comments on a live task the caller sees: `body` (≤ 10,000 characters), an optional
    /// `parent` (one level of replies, same task: else `invalid_relation`). The active people
    /// of the organization it mentions are recorded, and those who can see the task become
    /// its participants (source `mention`).
    pub async fn add_comment(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        body: &str,
        parent: Option<CommentId>,
    ) -> Result<CommentView, Error> {
        let task = self.visible_task(actor, task).await?;
        refuse_archived(&task)?;
        let body = check_comment_body(body)?;
        let org = actor.org_id();
        if let Some(parent) = parent {
            let parent = match self.ports.social.get_comment(org, parent).await {
                Ok(p) => p,
                Err(teamcomm_kernel::RepoError::NotFound) => {
                    return Err(Error::new(
                        ErrorCode::InvalidRelation,
                        "The parent comment does not exist.",
                    ));
                }
                Err(e) => return Err(e.into()),
            };
            check_parent(&parent, &task)?;
        }
        let mentions = self.mentions_in(org, &body).await?;
        let comment = Comment {
            id: CommentId::new(),
            task: task.id,
            parent,
            author: actor.person_id(),
            agent_name: actor.executor().agent,
            body,
            mentions: mentions.clone(),
            edited_at: None,
            deleted_at: None,
            created_at: self.ports.clock.now(),
        };
        let event = social_event(
            actor,
            &task,
            "comment_added",
            json!({ "comment": comment.id.0, "parent_comment": parent.map(|p| p.0) }),
            false,
        );
        let comment = self.ports.social.add_comment(org, &comment, &event).await?;
        self.add_mentioned(actor, &task, &mentions).await?;
        self.comment_view(actor, comment).await
    }

    /// The task's comments, oldest first.
    pub async fn list_comments(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        filter: &CommentFilter,
        page: PageRequest,
    ) -> Result<Page<CommentView>, Error> {
        let task = self.visible_task(actor, task).await?;
        let org = actor.org_id();
        let page = self
            .ports
            .social
            .list_comments(org, task.id, filter, page)
            .await?;
        let results = self
            .comment_views(org, actor.person_id(), page.results)
            .await?;
        Ok(Page {
            count: page.count,
            results,
        })
    }

    /// Edits a comment: its author only (`comment_not_author`); stamps `edited_at`. A deleted
    /// comment is 404.
    pub async fn edit_comment(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        id: CommentId,
        body: &str,
    ) -> Result<CommentView, Error> {
        let task = self.visible_task(actor, task).await?;
        refuse_archived(&task)?;
        let comment = self.task_comment(actor, &task, id).await?;
        if comment.deleted_at.is_some() {
            return Err(Error::not_found());
        }
        if comment.author.is_none() || comment.author != actor.person_id() {
            return Err(Error::new(
                ErrorCode::CommentNotAuthor,
                "Only the author of a comment can edit it.",
            ));
        }
        let body = check_comment_body(body)?;
        let org = actor.org_id();
        let mentions = self.mentions_in(org, &body).await?;
        let comment = self
            .ports
            .social
            .edit_comment(org, id, &body, &mentions, self.ports.clock.now())
            .await?;
        self.add_mentioned(actor, &task, &mentions).await?;
        self.comment_view(actor, comment).await
    }

    /// Deletes a comment softly (body blanked, row kept): its author or an organization admin
    /// (`comment_not_author`). Deleting it again changes nothing.
    pub async fn delete_comment(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        id: CommentId,
    ) -> Result<(), Error> {
        let task = self.visible_task(actor, task).await?;
        refuse_archived(&task)?;
        let comment = self.task_comment(actor, &task, id).await?;
        let is_author = comment.author.is_some() && comment.author == actor.person_id();
        if !is_author && !actor.is_org_admin() {
            return Err(Error::new(
                ErrorCode::CommentNotAuthor,
                "Only the author of a comment or an organization admin can delete it.",
            ));
        }
        if comment.deleted_at.is_some() {
            return Ok(());
        }
        let event = social_event(
            actor,
            &task,
            "comment_deleted",
            json!({ "comment": id.0 }),
            false,
        );
        Ok(self
            .ports
            .social
            .delete_comment(actor.org_id(), id, self.ports.clock.now(), &event)
            .await?)
    }

    /// The caller reacts to a comment with one emoji (idempotent); a comment carries at most
    /// [`MAX_REACTION_EMOJIS`] different ones (`reaction_limit_reached`). Answers the comment.
    pub async fn add_reaction(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        comment: CommentId,
        emoji: &str,
    ) -> Result<CommentView, Error> {
        let person = actor.person()?.id;
        let task = self.visible_task(actor, task).await?;
        refuse_archived(&task)?;
        let comment = self.task_comment(actor, &task, comment).await?;
        if comment.deleted_at.is_some() {
            return Err(Error::not_found());
        }
        let emoji = check_emoji(emoji)?;
        let org = actor.org_id();
        let reactions = self.ports.social.reactions_on(org, &[comment.id]).await?;
        let mut emojis: Vec<&str> = reactions.iter().map(|r| r.emoji.as_str()).collect();
        emojis.sort_unstable();
        emojis.dedup();
        if !emojis.contains(&emoji.as_str()) && emojis.len() >= MAX_REACTION_EMOJIS {
            return Err(Error::new(
                ErrorCode::ReactionLimitReached,
                "This comment already carries the most different emojis it may.",
            )
            .with_extra("limit", MAX_REACTION_EMOJIS as u64));
        }
        let reaction = Reaction {
            comment: comment.id,
            user: person,
            emoji,
            agent_name: actor.executor().agent,
            created_at: self.ports.clock.now(),
        };
        self.ports.social.add_reaction(org, &reaction).await?;
        self.comment_view(actor, comment).await
    }

    /// A comment's reactions, oldest first, of one emoji when given.
    pub async fn list_reactions(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        comment: CommentId,
        emoji: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<ReactionView>, Error> {
        let task = self.visible_task(actor, task).await?;
        let comment = self.task_comment(actor, &task, comment).await?;
        let org = actor.org_id();
        let page = self
            .ports
            .social
            .list_reactions(org, comment.id, emoji, page)
            .await?;
        let people = self
            .people(org, page.results.iter().map(|r| r.user))
            .await?;
        Ok(Page {
            count: page.count,
            results: page
                .results
                .into_iter()
                .map(|reaction| ReactionView {
                    user: people.get(&reaction.user).cloned(),
                    reaction,
                })
                .collect(),
        })
    }

    /// Takes the caller's reaction off a comment (idempotent).
    pub async fn remove_reaction(
        &self,
        actor: &PlanActor,
        task: &TaskRef,
        comment: CommentId,
        emoji: &str,
    ) -> Result<(), Error> {
        let person = actor.person()?.id;
        let task = self.visible_task(actor, task).await?;
        refuse_archived(&task)?;
        let comment = self.task_comment(actor, &task, comment).await?;
        Ok(self
            .ports
            .social
            .remove_reaction(actor.org_id(), comment.id, person, emoji)
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_bounded() {
        assert!(check_comment_body(&"é".repeat(10_000)).is_ok());
        let e = check_comment_body(&"é".repeat(10_001)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::CommentBodyTooLong);
        assert!(
            check_comment_body("  \n")
                .unwrap_err()
                .field_errors()
                .contains_key("body")
        );
    }

    #[test]
    fn mentions_are_read_once_in_order() {
        let a = Uuid::now_v7();
        let b = Uuid::now_v7();
        let body = format!("hi <@DB@{b}> and <@DB@{a}>, <@DB@{b}> <@DB@nope> <@DB@{a}");
        assert_eq!(mentioned_ids(&body), [UserId(b), UserId(a)]);
        assert!(mentioned_ids("<@DB@").is_empty());
    }

    #[test]
    fn one_emoji_per_reaction() {
        for ok in ["👍", "❤️", "🎉", "👍🏽", "👨‍👩‍👧", "☀", "✅", "1️⃣", "🇫🇷", "🧑‍💻"]
        {
            assert_eq!(check_emoji(ok).unwrap(), ok, "{ok:?}");
        }
        for bad in [
            "",
            "a",
            "ok",
            "👍 ",
            " 👍",
            "\u{200D}",
            "\u{FE0F}",
            "👍👍👍👍👍👍👍👍👍",
            "1",
            "<3",
            "\u{200D}👍",
        ] {
            let e = check_emoji(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::ReactionInvalidEmoji, "{bad:?}");
        }
    }
}
