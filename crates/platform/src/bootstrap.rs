//! First start: create the first account with one owner user and hand its bearer token to
//! the operator in `DATA_DIR/bootstrap-token` (mode 0600, written atomically). Later starts
//! reuse the token in that file; they never rotate it.

use std::path::{Path, PathBuf};

use crate::data_dir::BOOTSTRAP_TOKEN_FILE;
use crate::data_dir::write_secret_line;
use crate::db::Db;
use crate::error::PlatformError;
use crate::model::AccountRole;
use crate::model::Token;
use crate::store::settings;
use slipway_identity::{people, tokens};

/// `platform_setting` key holding the owner user created on first start.
const BOOTSTRAP_USER_KEY: &str = "bootstrap_user_id";
/// `platform_setting` key holding the first account, to which `user add` adds members.
const DEFAULT_ACCOUNT_KEY: &str = "default_account_id";

/// The name the bootstrap token has in the owner's token list.
const BOOTSTRAP_TOKEN_NAME: &str = "bootstrap token (DATA_DIR/bootstrap-token)";

/// E-mail address of the first owner (changeable later; it is only an identifier).
pub const BOOTSTRAP_EMAIL: &str = "owner@localhost";

/// The first account and its owner, created if the database has none yet.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// The first account.
    pub account_id: String,
    /// Where the owner's token is.
    pub token_file: PathBuf,
}

/// Makes sure the first account exists and `data_dir/bootstrap-token` holds a valid token of
/// its owner.
///
/// - No account yet: create it and its owner, write the token file, then commit (a failed
///   write leaves nothing behind).
/// - Account and a valid token file: nothing to do.
/// - Account but no token file (for example a new data directory over the same PostgreSQL
///   database): a new token is issued to the owner and written; old tokens stay valid.
/// - A token file whose token this database does not know: refuse to start rather than
///   overwrite what the operator may still rely on.
pub async fn ensure(db: &Db, data_dir: &Path) -> Result<Bootstrap, PlatformError> {
    std::fs::create_dir_all(data_dir)?;
    let token_file = data_dir.join(BOOTSTRAP_TOKEN_FILE);
    let mut tx = db.begin_write().await?;
    let found = settings::get_many(&mut tx, &[BOOTSTRAP_USER_KEY, DEFAULT_ACCOUNT_KEY]).await?;
    let mut owner = None;
    let mut account = None;
    for (key, value) in found {
        if key == BOOTSTRAP_USER_KEY {
            owner = Some(value);
        } else {
            account = Some(value);
        }
    }
    let (Some(owner), Some(account_id)) = (owner, account) else {
        let account_id = people::create_account(&mut tx, "default").await?;
        let user = people::create(
            &mut tx,
            &account_id,
            BOOTSTRAP_EMAIL,
            "Owner",
            AccountRole::Admin,
            BOOTSTRAP_TOKEN_NAME,
        )
        .await?;
        for (key, value) in [
            (BOOTSTRAP_USER_KEY, &user.id),
            (DEFAULT_ACCOUNT_KEY, &account_id),
        ] {
            settings::insert(&mut tx, key, value).await?;
        }
        write_secret_line(&token_file, user.token.expose())?;
        tx.commit().await?;
        tracing::info!(path = %token_file.display(), "created the first account; owner token written");
        return Ok(Bootstrap {
            account_id,
            token_file,
        });
    };
    match std::fs::read_to_string(&token_file) {
        Ok(text) => {
            let token = Token::from_string(text.trim().to_owned());
            let known = tokens::authenticate(&mut tx, &token).await.ok();
            if known.is_none_or(|k| k.caller.user_id != owner) {
                return Err(PlatformError::Bootstrap(format!(
                    "{} holds a token this database does not know; remove the file to have a \
                     new owner token issued",
                    token_file.display()
                )));
            }
            crate::data_dir::restrict_to_owner(&token_file)?;
            tx.rollback().await?;
            tracing::info!(path = %token_file.display(), "reusing the owner token");
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let made = tokens::issue_unlimited(&mut tx, &owner, BOOTSTRAP_TOKEN_NAME).await?;
            write_secret_line(&token_file, made.token.expose())?;
            tx.commit().await?;
            tracing::warn!(path = %token_file.display(), "owner token file was missing; issued a new owner token");
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Bootstrap {
        account_id,
        token_file,
    })
}

/// The first account's id as the database records it (the account `slipway platform serve`
/// made on its first start): its admins are the platform's operators, who may read what
/// concerns the whole server, such as `/metrics`.
pub async fn first_account(tx: &mut crate::db::Tx) -> Result<Option<String>, sqlx::Error> {
    Ok(settings::get_many(tx, &[DEFAULT_ACCOUNT_KEY])
        .await?
        .into_iter()
        .next()
        .map(|(_, value)| value))
}

/// The first account's id, creating the account (and the token file) if needed.
pub async fn default_account(db: &Db, data_dir: &Path) -> Result<String, PlatformError> {
    Ok(ensure(db, data_dir).await?.account_id)
}
