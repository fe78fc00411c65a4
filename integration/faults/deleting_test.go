package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/integration/faults"
)

// code returns the service's error code of err, "" for none.
func code(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// Deleting refuses, while a name is held, the creates of that table, queue
// or container with the service's answer, sending nothing; other requests
// pass, and a released name is created.
func TestDeletingRefusesCreatesWhileHeld(t *testing.T) {
	ctx := t.Context()
	d := faults.NewDeleting()
	view := env.With(d)
	table, queue, box := env.TableName(t), env.QueueName(t), env.ContainerName(t)
	d.Hold(faults.Table, table, time.Minute)
	d.Hold(faults.Queue, queue, time.Minute)
	d.Hold(faults.Container, box, time.Minute)

	if _, err := view.TableService.CreateTable(ctx, table, nil); code(err) != "TableBeingDeleted" {
		t.Errorf("table create: %v", err)
	}
	q := view.QueueService.NewQueueClient(queue)
	if _, err := q.Create(ctx, nil); code(err) != "QueueBeingDeleted" {
		t.Errorf("queue create: %v", err)
	}
	c := view.BlobService.ServiceClient().NewContainerClient(box)
	if _, err := c.Create(ctx, nil); code(err) != "ContainerBeingDeleted" {
		t.Errorf("container create: %v", err)
	}
	// azcore retries no 409: one refusal each.
	if n := d.Refused(); n != 3 {
		t.Errorf("refused %d tries, want 3", n)
	}
	// Nothing reached the service.
	if _, err := env.QueueService.NewQueueClient(queue).GetProperties(ctx, nil); code(err) != "QueueNotFound" {
		t.Errorf("the queue: %v", err)
	}
	// Other names and other requests pass.
	if _, err := view.TableService.CreateTable(ctx, env.TableName(t), nil); err != nil {
		t.Errorf("another table: %v", err)
	}

	d.Hold(faults.Table, table, 0)
	d.Hold(faults.Queue, queue, 0)
	d.Hold(faults.Container, box, 0)
	if _, err := view.TableService.CreateTable(ctx, table, nil); err != nil {
		t.Errorf("table create after release: %v", err)
	}
	if _, err := q.Create(ctx, nil); err != nil {
		t.Errorf("queue create after release: %v", err)
	}
	t.Cleanup(func() { _, _ = env.QueueService.DeleteQueue(context.Background(), queue, nil) })
	if _, err := c.Create(ctx, nil); err != nil {
		t.Errorf("container create after release: %v", err)
	}
	t.Cleanup(func() { _, _ = env.BlobService.DeleteContainer(context.Background(), box, nil) })
	// A blob's PUT is not a queue's create, whatever its name.
	d.Hold(faults.Queue, queue, time.Minute)
	if _, err := c.NewBlockBlobClient(queue).UploadBuffer(ctx, []byte("x"), nil); err != nil {
		t.Errorf("a blob named like a held queue: %v", err)
	}
	if n := d.Refused(); n != 3 {
		t.Errorf("refused %d tries, want 3", n)
	}
}
