// Package exchange moves batches between operator instances: the sending
// side of every edge the plan cuts. Forward and rebalance (sendEx) pass
// batches on; the keyed exchanges route each record to the instance that
// owns its key group (KeyEx for windows and joins, routeEx for keyed
// record operators, ordKeyEx in an ordered job); combineEx pre-aggregates
// a window's records before they are routed; the ordered exchanges and
// OrdTask restore the order of units at a region's exit. Wire encodes
// what an edge sends for a receiver in another process, and the remote
// outlet and pump carry it over the transport. EdgeStats accounts the
// load of a partitioned edge per epoch.
//
// An exchange is a dataflow.Pusher: the upstream task pushes a borrowed
// batch into it, and it copies the records into dense batches that it
// sends to runtime outlets, one per receiving instance; a marker is sent
// on every outlet.
package exchange
