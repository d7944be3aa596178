// A commit's share of an online shrink (Allocator/OnlineShrink.swift, point 3): the trees'
// nodes past the limit, from where the last commit stopped, within a budget; and the schema
// blob. Run as the transaction's edits end, before its leaves are encoded, so that what it
// makes buffers is encoded with the rest.

extension WriteTransaction {
    /// Moves this commit's share of the nodes past the shrink limit, when the file shrinks.
    func evacuateForShrinking() throws(StorageError) {
        // The write lane's holder owns the shrink state, and this transaction holds the lane.
        guard var shrink = store.shrink, let limit = shrink.bindingLimit else { return }
        defer { store.shrink = shrink }
        if !top.schemaBlob.isNone, newSchemaBlob == nil {
            let blob = try context.node(top.schemaBlob, .blob)
            if top.schemaBlob.offset + UInt64(context.check.sealing.footprint(blob.length)) > limit { newSchemaBlob = try schemaBlob() }
        }
        guard !top.tables.isEmpty, shrink.walks else { return }
        // Nodes are moved only into room below the limit, half of it at most: with none (a
        // reader pins what lies there, or commits filled it), a node moved now would land past
        // the limit again, and the shrink waits instead (point 7).
        let room = Int(clamping: store.free.reusableBytes(below: limit) / 2)
        guard room >= ShrinkState.minimumMove else {
            shrink.waitForRoom()
            return
        }
        var budget = EvacuationBudget(visits: ShrinkState.visitsPerCommit, bytes: min(ShrinkState.bytesPerCommit, room))
        // Each tree is started at most once per commit: a table count's worth of empty trees
        // costs nothing, and a whole pass never runs twice in one commit.
        var started = 0
        // Of `budget.moved`, the bytes already added to the pass they were moved in.
        var counted = 0
        let trees = top.tables.reduce(0) { $0 + 1 + $1.columns.count }
        while !budget.isSpent && started <= trees {
            if shrink.table >= top.tables.count {
                shrink.table = 0
                shrink.tree = -1
                shrink.movedThisPass += budget.moved - counted
                counted = budget.moved
                shrink.passCompleted()
                guard shrink.walks else { break }
            }
            let state = state(at: shrink.table)
            started += 1
            if shrink.tree < 0 {
                switch try state.cluster.evacuate(from: shrink.clusterKey, limit: limit, budget: &budget) {
                case .finished:
                    shrink.clusterKey = nil
                    shrink.tree = 0
                case .stopped(let key):
                    shrink.clusterKey = key
                }
                continue
            }
            guard shrink.tree < state.indexes.count else {
                shrink.table += 1
                shrink.tree = -1
                continue
            }
            guard state.indexes[shrink.tree] != nil else {
                shrink.tree += 1
                continue
            }
            switch try state.indexes[shrink.tree]!.evacuate(from: shrink.indexKey, limit: limit, budget: &budget) {
            case .finished:
                shrink.indexKey = nil
                shrink.tree += 1
            case .stopped(let key):
                shrink.indexKey = key
            }
        }
        shrink.movedThisPass += budget.moved - counted
        if budget.moved > 0 { store.noteShrinkMoved(budget.moved) }
    }
}
