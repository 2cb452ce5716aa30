// Package routing holds the routing tables of a running job's keyed
// operators as they change: a Schedule per group of keyed operators (those
// of one parallelism) lists the key-group tables in force from given
// epochs. The senders of every keyed exchange read it once per epoch, as
// they cross a marker; the receiving instances read it at their aligned
// markers to learn which key groups they hand over and which they take;
// a reconfiguration adds a table in force from a later epoch.
//
// A source's shares follow a Schedule too (NewShares): there a table's
// "key groups" are the shares its input is split into, owned by the
// instances that read them; the source's instances enter epochs as they
// end them, and move their readers where the table changes.
//
// A Schedule keeps one rule that makes a table safe to add while the job
// runs: no table may take force at an epoch that a sender of this process
// has already entered (Add refuses it with ErrTooLate), so every sender
// routes every epoch by the same table, and so do the receivers that
// follow their markers. Tables that start instances go in with
// AddAllJoining, which sets the instances' joins under the schedules'
// locks, and only if no sender can yet have ended the epoch before a
// join (a sender enters each epoch before it ends the one before).
package routing
