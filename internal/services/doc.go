// Package services makes sure the servers the connectors' tests talk to
// are running on this machine: PostgreSQL, Redis and NATS with
// JetStream, each on its usual local port. A test calls Need with the
// server's name; if nothing listens on the port, Need starts the server
// with its usual command and waits for the port, and fails the test,
// naming the server and the command, when it cannot. A test that needs
// a server never skips.
package services
