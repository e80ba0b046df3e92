/*!
SQL over perfq datasets.
*/
#![deny(missing_docs)]
