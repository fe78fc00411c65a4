// Package provision is the create-if-missing loop that every tablekit
// object owning storage runs in its Provision method: entity.Table's
// table, eventual's queues and container, large's and bloblog's
// containers, account's queue and container provisioners.
//
// A create is truthful: it returns nil only when the resource exists —
// created now, found existing (TableAlreadyExists, QueueAlreadyExists,
// ContainerAlreadyExists), or found by the resend of a create whose reply
// was lost (the resend meets what its first try made). A name that the
// service is still deleting (409 TableBeingDeleted, QueueBeingDeleted,
// ContainerBeingDeleted: about 40 s after a delete on Azure Storage) is
// asked again with backoff until the create succeeds or ctx ends; then the
// error matches ErrBeingDeleted and ctx's error, never a success.
package provision
