//! How deep a statement may nest, told from its tokens before it is
//! parsed.
//!
//! DataFusion parses and plans by recursion. Its `recursive_protection`
//! grows the stack where it recurses itself, but the derived `Clone`,
//! `Drop`, `PartialEq` and `Hash` of its expression trees recurse
//! unguarded, so a statement nested deeper than a thread's stack allows
//! (`1 + 1 + … + 1` a hundred thousand times) would end the process with a
//! signal and no word. Each level of a statement's tree is opened by a
//! token: an operator, a keyword, a bracket or a dot. The items of a list
//! (commas, literals, plain names) sit side by side and open none, so a
//! long `IN (…)` list is not held against a statement.

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

use crate::Error;

/// The most tokens that may open a level. With the session's threads'
/// stacks (`STACK` in `session.rs`) an expression tree this deep is
/// copied, compared, printed and dropped with room to spare, in
/// unoptimized builds too (a few KiB a level). A person's or a program's
/// query comes nowhere near it (a filter naming 5,000 threads with `OR`
/// has 10,000; with `IN` a handful). DataFusion's planning time grows with
/// the square of a chain's length, which is a second reason for a bound.
pub const MAX_LEVELS: usize = 20_000;

/// Refuses `sql` when it has more tokens that can open a level than
/// [`MAX_LEVELS`]. Text that does not tokenize passes: DataFusion's parser
/// then says what is wrong with it.
pub(crate) fn check(sql: &str) -> Result<(), Error> {
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return Ok(());
    };
    let levels = tokens.iter().filter(|t| opens_level(t)).count();
    if levels > MAX_LEVELS {
        return Err(Error::TooDeep {
            levels,
            max: MAX_LEVELS,
        });
    }
    Ok(())
}

/// Whether `token` can put what follows it one level deeper.
fn opens_level(token: &Token) -> bool {
    match token {
        Token::Word(w) => w.keyword != Keyword::NoKeyword,
        Token::EOF
        | Token::Whitespace(_)
        | Token::Comma
        | Token::SemiColon
        | Token::RParen
        | Token::RBracket
        | Token::RBrace
        | Token::Number(..)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::HexStringLiteral(_) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_flat_and_chains_are_deep() {
        let list: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
        let list = format!("SELECT * FROM samples WHERE tid IN ({})", list.join(", "));
        assert!(check(&list).is_ok());
        // SELECT is one level, each `+` another.
        let chain = format!("SELECT 1{}", " + 1".repeat(MAX_LEVELS - 1));
        assert!(check(&chain).is_ok());
        let chain = format!("{chain} + 1");
        match check(&chain) {
            Err(Error::TooDeep { levels, max }) => {
                assert_eq!((levels, max), (MAX_LEVELS + 1, MAX_LEVELS));
            }
            other => panic!("{other:?}"),
        }
        let negated = format!("SELECT {}1", "- ".repeat(MAX_LEVELS));
        assert!(check(&negated).is_err());
        assert!(check("SELECT 'unterminated").is_ok());
    }
}
