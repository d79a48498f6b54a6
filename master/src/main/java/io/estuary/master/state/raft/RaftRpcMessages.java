package io.estuary.master.state.raft;

import org.apache.ratis.proto.RaftProtos.RaftRpcReplyProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyExceptionReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerReplyProto;
import org.apache.ratis.proto.netty.NettyProtos.RaftNettyServerRequestProto;
import org.apache.ratis.util.ProtoUtils;

/**
 * What the authenticated Raft transport reads from Ratis' envelope messages (the ones its netty transport uses):
 * the four server-to-server calls masters make to each other, and the stale read by which a master asks another
 * which formats it applies. Stateless.
 */
final class RaftRpcMessages {
    private RaftRpcMessages() {}

    /** The request header of a call between masters, or null for a kind masters never send each other. */
    static RaftRpcRequestProto header(RaftNettyServerRequestProto request) {
        switch (request.getRaftNettyServerRequestCase()) {
            case REQUESTVOTEREQUEST:
                return request.getRequestVoteRequest().getServerRequest();
            case STARTLEADERELECTIONREQUEST:
                return request.getStartLeaderElectionRequest().getServerRequest();
            case APPENDENTRIESREQUEST:
                return request.getAppendEntriesRequest().getServerRequest();
            case INSTALLSNAPSHOTREQUEST:
                return request.getInstallSnapshotRequest().getServerRequest();
            case RAFTCLIENTREQUEST:
                return request.getRaftClientRequest().getRpcRequest();
            default:
                return null;
        }
    }

    /** The call id a reply answers (-1 for a reply kind this transport never asks for). */
    static long callId(RaftNettyServerReplyProto reply) {
        switch (reply.getRaftNettyServerReplyCase()) {
            case REQUESTVOTEREPLY:
                return reply.getRequestVoteReply().getServerReply().getCallId();
            case STARTLEADERELECTIONREPLY:
                return reply.getStartLeaderElectionReply().getServerReply().getCallId();
            case APPENDENTRIESREPLY:
                return reply.getAppendEntriesReply().getServerReply().getCallId();
            case INSTALLSNAPSHOTREPLY:
                return reply.getInstallSnapshotReply().getServerReply().getCallId();
            case RAFTCLIENTREPLY:
                return reply.getRaftClientReply().getRpcReply().getCallId();
            case EXCEPTIONREPLY:
                return reply.getExceptionReply().getRpcReply().getCallId();
            default:
                return -1;
        }
    }

    /** The reply that carries {@code e} back to the caller of {@code header}'s call. */
    static RaftNettyServerReplyProto failure(RaftRpcRequestProto header, java.io.IOException e) {
        RaftRpcReplyProto rpcReply = RaftRpcReplyProto.newBuilder()
                .setRequestorId(header.getRequestorId())
                .setReplyId(header.getReplyId())
                .setCallId(header.getCallId())
                .setSuccess(false)
                .build();
        return RaftNettyServerReplyProto.newBuilder()
                .setExceptionReply(RaftNettyExceptionReplyProto.newBuilder()
                        .setRpcReply(rpcReply)
                        .setException(ProtoUtils.writeObject2ByteString(e)))
                .build();
    }
}
