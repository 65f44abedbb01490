// SPDX-License-Identifier: Apache-2.0
// The AMQP connection and its I/O thread (see amqp_client.h). Invariants: only the I/O thread
// touches the rabbitmq-c connection (rabbitmq-c is not thread-safe); channel 1 carries
// declarations and publishes in confirm mode, channel 2 carries the consumers, so a publish to a
// missing exchange (which closes channel 1) never costs the unacked deliveries of channel 2.
#include "celery/amqp_client.h"

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "celery/amqp_wire.h"

namespace mineru::jobs {
namespace {

using amqp_wire::Borrow;
using amqp_wire::ToString;

constexpr amqp_channel_t kPublishChannel = 1;
constexpr amqp_channel_t kConsumeChannel = 2;

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

ErrorCode CodeForReply(uint16_t reply_code) {
  switch (reply_code) {
    case 403:  // ACCESS_REFUSED
    case 406:  // PRECONDITION_FAILED (e.g. a redeclare with other arguments)
      return ErrorCode::kInvalidArgument;
    case 404:
      return ErrorCode::kNotFound;
    default:
      return ErrorCode::kUnavailable;
  }
}

// The error of a synchronous method's reply, or OK.
Status CheckReply(const amqp_rpc_reply_t& reply, std::string_view what) {
  switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return OkStatus();
    case AMQP_RESPONSE_NONE:
      return Fail(ErrorCode::kUnavailable, "AMQP {}: no reply", what);
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      return Fail(ErrorCode::kUnavailable, "AMQP {}: {}", what,
                  amqp_error_string2(reply.library_error));
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD && reply.reply.decoded != nullptr) {
        auto* close = static_cast<amqp_connection_close_t*>(reply.reply.decoded);
        return Fail(CodeForReply(close->reply_code), "AMQP {}: broker closed the connection: {}",
                    what, amqp_wire::DescribeClose(close->reply_code, close->reply_text));
      }
      if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD && reply.reply.decoded != nullptr) {
        auto* close = static_cast<amqp_channel_close_t*>(reply.reply.decoded);
        return Fail(CodeForReply(close->reply_code), "AMQP {}: broker closed the channel: {}", what,
                    amqp_wire::DescribeClose(close->reply_code, close->reply_text));
      }
      return Fail(ErrorCode::kUnavailable, "AMQP {}: unexpected broker method {:#x}", what,
                  reply.reply.id);
  }
  return Fail(ErrorCode::kInternal, "AMQP {}: unknown reply type", what);
}

struct ConsumerSpec {
  std::string queue;
  uint16_t prefetch = 0;
  DeliveryCallback callback;
};

// A delivery whose content frames are still arriving.
struct PartialDelivery {
  amqp_channel_t channel = 0;
  bool deliver = false;  // basic.deliver; false: content to skip (e.g. a basic.return)
  bool header_seen = false;
  size_t remaining = 0;
  bool oversized = false;
  bool malformed = false;
  Delivery delivery;
};

enum class Settlement { kAck, kNack, kReject };

}  // namespace

class AmqpConnection::Impl {
 public:
  ~Impl() { Close(); }

  Status Start(const AmqpOptions& options, Topology topology);
  Status Publish(std::string_view exchange, std::string_view routing_key, const Message& message);
  Status Consume(std::string_view queue, uint16_t prefetch, DeliveryCallback callback);
  Status Settle(DeliveryTag tag, Settlement kind, bool requeue);
  void Close();

  bool connected() const { return connected_.load(); }
  AmqpCounters counters() const {
    std::lock_guard lock(counters_mu_);
    return counters_;
  }
  std::string last_error() const {
    std::lock_guard lock(counters_mu_);
    return last_error_;
  }

 private:
  using Promise = std::shared_ptr<std::promise<Status>>;

  bool OnIoThread() const { return std::this_thread::get_id() == io_thread_.get_id(); }
  // Runs `command` on the I/O thread (inline when already there) and waits up to `timeout` for
  // it to fulfil the promise it is given.
  Status Run(std::function<void(Promise)> command, std::chrono::milliseconds timeout);
  void Wake();
  void RunCommands();
  void Loop();

  // I/O thread only (or the caller of Start, before the thread exists).
  Status Connect();
  Status Declare();
  Status StartConsumer(size_t index);
  Status PumpOnce();
  Status HandleFrame(const amqp_frame_t& frame);
  Status HandleMethod(amqp_channel_t channel, const amqp_method_t& method);
  Status ReopenPublishChannel(const std::string& reason);
  void FinishDelivery();
  void ResolveConfirms(uint64_t tag, bool multiple, const Status& status);
  void Disconnect(const Error& error);
  Status SettleNow(DeliveryTag tag, Settlement kind, bool requeue);
  void Count(uint64_t AmqpCounters::*counter) {
    std::lock_guard lock(counters_mu_);
    ++(counters_.*counter);
  }
  void SetLastError(const Error& error) {
    std::lock_guard lock(counters_mu_);
    last_error_ = error.ToString();
  }

  AmqpOptions options_;
  Topology topology_;
  std::thread io_thread_;
  int wake_fd_ = -1;
  std::atomic<bool> started_{false};
  std::atomic<bool> connected_{false};

  std::mutex mu_;  // guards commands_ and stopping_
  std::deque<std::function<void()>> commands_;
  bool stopping_ = false;

  mutable std::mutex counters_mu_;
  AmqpCounters counters_;
  std::string last_error_;

  // I/O thread state.
  amqp_connection_state_t conn_ = nullptr;
  bool broken_ = false;      // a write failed: drop the connection at the next turn
  uint64_t generation_ = 0;  // connections made so far; DeliveryTag::connection
  uint64_t next_publish_seq_ = 0;
  std::map<uint64_t, Promise> confirms_;  // publish sequence number -> waiting Publish
  std::unordered_set<uint64_t> unacked_;  // delivery tags of this connection not yet settled
  std::deque<ConsumerSpec> consumers_;    // a deque: a callback may add one while running
  std::map<std::string, size_t, std::less<>> consumer_by_tag_;
  std::optional<PartialDelivery> partial_;
};

Status AmqpConnection::Impl::Start(const AmqpOptions& options, Topology topology) {
  if (started_.load()) return Fail(ErrorCode::kInvalidArgument, "AMQP connection already started");
  if (options.idle_wait.count() <= 0 || options.reconnect_initial_backoff.count() <= 0 ||
      options.reconnect_max_backoff < options.reconnect_initial_backoff) {
    return Fail(ErrorCode::kInvalidArgument, "AMQP options: bad idle wait or backoff");
  }
  options_ = options;
  topology_ = std::move(topology);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Fail(ErrorCode::kIo, "eventfd failed");
  if (Status status = Connect(); !status) {
    close(wake_fd_);
    wake_fd_ = -1;
    SetLastError(status.error());
    return status;
  }
  started_ = true;
  io_thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

void AmqpConnection::Impl::Close() {
  if (!started_.exchange(false)) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  Wake();
  io_thread_.join();
  close(wake_fd_);
  wake_fd_ = -1;
}

void AmqpConnection::Impl::Wake() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

Status AmqpConnection::Impl::Run(std::function<void(Promise)> command,
                                 std::chrono::milliseconds timeout) {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> done = promise->get_future();
  if (OnIoThread()) {
    command(promise);
  } else {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || !started_.load()) {
        return Fail(ErrorCode::kUnavailable, "AMQP connection is not running");
      }
      commands_.push_back([command = std::move(command), promise] { command(promise); });
    }
    Wake();
  }
  if (done.wait_for(timeout) != std::future_status::ready) {
    return Fail(ErrorCode::kUnavailable, "AMQP: no answer within {} ms", timeout.count());
  }
  return done.get();
}

void AmqpConnection::Impl::RunCommands() {
  std::deque<std::function<void()>> commands;
  {
    std::lock_guard lock(mu_);
    commands.swap(commands_);
  }
  for (auto& command : commands) command();
}

Status AmqpConnection::Impl::Publish(std::string_view exchange, std::string_view routing_key,
                                     const Message& message) {
  if (started_.load() && OnIoThread()) {
    return Fail(ErrorCode::kInvalidArgument,
                "AMQP Publish from the delivery callback would wait on its own thread");
  }
  if (!connected_.load()) {
    Count(&AmqpCounters::publish_failures);
    return Fail(ErrorCode::kUnavailable, "AMQP broker unreachable; message not published");
  }
  // The command may outlive this call (when the wait times out), so it owns copies.
  auto owned = std::make_shared<std::tuple<std::string, std::string, Message>>(
      std::string(exchange), std::string(routing_key), message);
  Status status = Run(
      [this, owned](Promise promise) {
        if (conn_ == nullptr || broken_) {
          promise->set_value(Fail(ErrorCode::kUnavailable, "AMQP broker unreachable"));
          return;
        }
        const auto& [ex, key, msg] = *owned;
        amqp_wire::Pool pool;
        amqp_basic_properties_t properties;
        if (Status encoded = amqp_wire::EncodeProperties(msg, pool, &properties); !encoded) {
          promise->set_value(encoded);
          return;
        }
        int rc =
            amqp_basic_publish(conn_, kPublishChannel, Borrow(ex), Borrow(key),
                               /*mandatory=*/0, /*immediate=*/0, &properties, Borrow(msg.body));
        if (rc != AMQP_STATUS_OK) {
          broken_ = true;
          promise->set_value(
              Fail(ErrorCode::kUnavailable, "AMQP publish failed: {}", amqp_error_string2(rc)));
          return;
        }
        confirms_[++next_publish_seq_] = std::move(promise);
      },
      options_.confirm_timeout);
  Count(status ? &AmqpCounters::published : &AmqpCounters::publish_failures);
  return status;
}

Status AmqpConnection::Impl::Consume(std::string_view queue, uint16_t prefetch,
                                     DeliveryCallback callback) {
  auto spec = std::make_shared<ConsumerSpec>(
      ConsumerSpec{std::string(queue), prefetch, std::move(callback)});
  return Run(
      [this, spec](Promise promise) {
        consumers_.push_back(*spec);
        if (conn_ == nullptr) {  // resumed with the others on reconnect
          promise->set_value(OkStatus());
          return;
        }
        Status status = StartConsumer(consumers_.size() - 1);
        if (!status) {
          // A consumer the broker refuses (e.g. no such queue) must not be retried forever.
          consumers_.pop_back();
          if (status.error().code == ErrorCode::kUnavailable) broken_ = true;
        }
        promise->set_value(status);
      },
      options_.rpc_timeout * 2 + options_.connect_timeout);
}

Status AmqpConnection::Impl::Settle(DeliveryTag tag, Settlement kind, bool requeue) {
  return Run([this, tag, kind,
              requeue](Promise promise) { promise->set_value(SettleNow(tag, kind, requeue)); },
             options_.rpc_timeout * 2 + options_.connect_timeout);
}

Status AmqpConnection::Impl::SettleNow(DeliveryTag tag, Settlement kind, bool requeue) {
  if (conn_ == nullptr || tag.connection != generation_) {
    Count(&AmqpCounters::stale_tags_dropped);
    return Fail(ErrorCode::kUnavailable,
                "AMQP delivery {} came on a connection since lost; the broker requeued it",
                tag.value);
  }
  if (unacked_.erase(tag.value) == 0) {
    // Sending it would be a channel error (PRECONDITION_FAILED - unknown delivery tag).
    return Fail(ErrorCode::kInvalidArgument, "AMQP delivery {} is not outstanding", tag.value);
  }
  int rc = AMQP_STATUS_OK;
  switch (kind) {
    case Settlement::kAck:
      rc = amqp_basic_ack(conn_, kConsumeChannel, tag.value, 0);
      break;
    case Settlement::kNack:
      rc = amqp_basic_nack(conn_, kConsumeChannel, tag.value, 0, requeue ? 1 : 0);
      break;
    case Settlement::kReject:
      rc = amqp_basic_reject(conn_, kConsumeChannel, tag.value, requeue ? 1 : 0);
      break;
  }
  if (rc != AMQP_STATUS_OK) {
    broken_ = true;
    return Fail(ErrorCode::kUnavailable, "AMQP settle failed: {}", amqp_error_string2(rc));
  }
  return OkStatus();
}

Status AmqpConnection::Impl::Connect() {
  amqp_connection_state_t conn = amqp_new_connection();
  if (conn == nullptr) return Fail(ErrorCode::kResourceExhausted, "AMQP: no memory");
  auto fail = [&](Status status) {
    amqp_destroy_connection(conn);
    return status;
  };
  amqp_socket_t* socket = amqp_tcp_socket_new(conn);
  if (socket == nullptr) return fail(Fail(ErrorCode::kResourceExhausted, "AMQP: no socket"));
  timeval connect_timeout = ToTimeval(options_.connect_timeout);
  int rc = amqp_socket_open_noblock(socket, options_.host.c_str(), options_.port, &connect_timeout);
  if (rc != AMQP_STATUS_OK) {
    return fail(Fail(ErrorCode::kUnavailable, "AMQP connect to {}:{}: {}", options_.host,
                     options_.port, amqp_error_string2(rc)));
  }
  timeval rpc_timeout = ToTimeval(options_.rpc_timeout);
  amqp_set_handshake_timeout(conn, &rpc_timeout);
  amqp_set_rpc_timeout(conn, &rpc_timeout);
  amqp_rpc_reply_t reply =
      amqp_login(conn, options_.vhost.c_str(), 0, options_.frame_max,
                 static_cast<int>(options_.heartbeat.count()), AMQP_SASL_METHOD_PLAIN,
                 options_.user.c_str(), options_.password.c_str());
  if (Status status = CheckReply(reply, "login"); !status) return fail(status);
  for (amqp_channel_t channel : {kPublishChannel, kConsumeChannel}) {
    amqp_channel_open(conn, channel);
    if (Status status = CheckReply(amqp_get_rpc_reply(conn), "channel.open"); !status) {
      return fail(status);
    }
  }
  amqp_confirm_select(conn, kPublishChannel);
  if (Status status = CheckReply(amqp_get_rpc_reply(conn), "confirm.select"); !status) {
    return fail(status);
  }
  conn_ = conn;
  broken_ = false;
  next_publish_seq_ = 0;
  ++generation_;
  consumer_by_tag_.clear();
  Status ready = Declare();
  for (size_t i = 0; ready && i < consumers_.size(); ++i) ready = StartConsumer(i);
  if (!ready) {
    conn_ = nullptr;
    return fail(ready);
  }
  {
    std::lock_guard lock(counters_mu_);
    if (counters_.connections++ > 0) ++counters_.reconnects;
  }
  connected_ = true;
  return OkStatus();
}

Status AmqpConnection::Impl::Declare() {
  for (const ExchangeSpec& exchange : topology_.exchanges) {
    if (exchange.name.empty()) continue;  // the default exchange always exists
    amqp_exchange_declare(conn_, kPublishChannel, Borrow(exchange.name), Borrow(exchange.type),
                          /*passive=*/0, exchange.durable ? 1 : 0, exchange.auto_delete ? 1 : 0,
                          /*internal=*/0, amqp_empty_table);
    MINERU_RETURN_IF_ERROR(
        CheckReply(amqp_get_rpc_reply(conn_), "exchange.declare " + exchange.name));
  }
  for (const QueueSpec& queue : topology_.queues) {
    AmqpTable arguments;
    if (queue.max_priority) arguments.push_back({"x-max-priority", int64_t{*queue.max_priority}});
    if (queue.dead_letter_exchange) {
      arguments.push_back({"x-dead-letter-exchange", *queue.dead_letter_exchange});
    }
    if (queue.dead_letter_routing_key) {
      arguments.push_back({"x-dead-letter-routing-key", *queue.dead_letter_routing_key});
    }
    arguments.insert(arguments.end(), queue.arguments.begin(), queue.arguments.end());
    amqp_wire::Pool pool;
    MINERU_ASSIGN_OR_RETURN(amqp_table_t table, amqp_wire::EncodeTable(arguments, pool));
    amqp_queue_declare(conn_, kPublishChannel, Borrow(queue.name), /*passive=*/0,
                       queue.durable ? 1 : 0, /*exclusive=*/0, queue.auto_delete ? 1 : 0, table);
    MINERU_RETURN_IF_ERROR(CheckReply(amqp_get_rpc_reply(conn_), "queue.declare " + queue.name));
  }
  for (const BindingSpec& binding : topology_.bindings) {
    amqp_queue_bind(conn_, kPublishChannel, Borrow(binding.queue), Borrow(binding.exchange),
                    Borrow(binding.routing_key), amqp_empty_table);
    MINERU_RETURN_IF_ERROR(CheckReply(amqp_get_rpc_reply(conn_), "queue.bind " + binding.queue));
  }
  return OkStatus();
}

Status AmqpConnection::Impl::StartConsumer(size_t index) {
  const ConsumerSpec& spec = consumers_[index];
  // Per consumer (global = 0): RabbitMQ applies the limit to the consumers started after it.
  amqp_basic_qos(conn_, kConsumeChannel, 0, spec.prefetch, /*global=*/0);
  MINERU_RETURN_IF_ERROR(CheckReply(amqp_get_rpc_reply(conn_), "basic.qos"));
  amqp_basic_consume_ok_t* ok =
      amqp_basic_consume(conn_, kConsumeChannel, Borrow(spec.queue), amqp_empty_bytes,
                         /*no_local=*/0, /*no_ack=*/0, /*exclusive=*/0, amqp_empty_table);
  MINERU_RETURN_IF_ERROR(CheckReply(amqp_get_rpc_reply(conn_), "basic.consume " + spec.queue));
  if (ok == nullptr) return Fail(ErrorCode::kUnavailable, "AMQP basic.consume: no reply");
  consumer_by_tag_[ToString(ok->consumer_tag)] = index;
  return OkStatus();
}

void AmqpConnection::Impl::Loop() {
  std::chrono::milliseconds backoff = options_.reconnect_initial_backoff;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    if (conn_ == nullptr) {
      // Wait out the backoff while still answering commands (they fail: no connection).
      auto deadline = std::chrono::steady_clock::now() + backoff;
      for (;;) {
        RunCommands();
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd wake{wake_fd_, POLLIN, 0};
        if (poll(&wake, 1, static_cast<int>(left.count()) + 1) > 0) {
          uint64_t drained;
          [[maybe_unused]] ssize_t n = read(wake_fd_, &drained, sizeof(drained));
        }
        std::lock_guard lock(mu_);
        if (stopping_) break;
      }
      {
        std::lock_guard lock(mu_);
        if (stopping_) break;
      }
      if (Status status = Connect(); !status) {
        SetLastError(status.error());
        backoff = std::min(backoff * 2, options_.reconnect_max_backoff);
        continue;
      }
      backoff = options_.reconnect_initial_backoff;
    }
    RunCommands();
    Status status =
        broken_ ? Fail(ErrorCode::kUnavailable, "AMQP connection write failed") : PumpOnce();
    if (!status) Disconnect(status.error());
  }
  if (conn_ != nullptr) {
    connected_ = false;
    // Graceful: the broker requeues this connection's unacked deliveries at once.
    amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    Disconnect(Error{ErrorCode::kCancelled, "AMQP connection closed"});
  }
  RunCommands();  // whatever arrived meanwhile fails: no connection
}

void AmqpConnection::Impl::Disconnect(const Error& error) {
  connected_ = false;
  if (error.code != ErrorCode::kCancelled) SetLastError(error);
  for (auto& [seq, promise] : confirms_) {
    promise->set_value(Fail(ErrorCode::kUnavailable,
                            "AMQP connection lost before the broker confirmed the message (it "
                            "may or may not be stored): {}",
                            error.message));
  }
  confirms_.clear();
  unacked_.clear();
  consumer_by_tag_.clear();
  partial_.reset();
  if (conn_ != nullptr) amqp_destroy_connection(conn_);
  conn_ = nullptr;
}

Status AmqpConnection::Impl::PumpOnce() {
  if (amqp_frames_enqueued(conn_) == 0 && amqp_data_in_buffer(conn_) == 0) {
    // Sleep until the socket or a command wakes us; rabbitmq-c's call below (with a zero
    // timeout) then reads what arrived and sends a heartbeat when one is due.
    pollfd fds[2] = {{amqp_get_sockfd(conn_), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(options_.idle_wait.count())) > 0 &&
        (fds[1].revents & POLLIN)) {
      uint64_t drained;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &drained, sizeof(drained));
    }
  }
  timeval immediately{0, 0};
  amqp_frame_t frame;
  int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &immediately);
  if (rc == AMQP_STATUS_TIMEOUT) return OkStatus();
  if (rc != AMQP_STATUS_OK) {
    return Fail(ErrorCode::kUnavailable, "AMQP connection lost: {}", amqp_error_string2(rc));
  }
  Status status = HandleFrame(frame);
  amqp_maybe_release_buffers(conn_);  // everything of the frame has been copied out
  return status;
}

Status AmqpConnection::Impl::HandleFrame(const amqp_frame_t& frame) {
  switch (frame.frame_type) {
    case AMQP_FRAME_METHOD:
      if (partial_ && partial_->channel == frame.channel) {
        return Fail(ErrorCode::kCorrupt, "AMQP method inside a message's content");
      }
      return HandleMethod(frame.channel, frame.payload.method);
    case AMQP_FRAME_HEADER: {
      if (!partial_ || partial_->channel != frame.channel || partial_->header_seen) {
        return Fail(ErrorCode::kCorrupt, "AMQP content header out of place");
      }
      partial_->header_seen = true;
      uint64_t size = frame.payload.properties.body_size;
      partial_->remaining = static_cast<size_t>(size);
      if (partial_->deliver) {
        if (size > options_.max_body_bytes) {
          partial_->oversized = true;
        } else {
          partial_->delivery.message.body.reserve(static_cast<size_t>(size));
        }
        const auto* properties =
            static_cast<const amqp_basic_properties_t*>(frame.payload.properties.decoded);
        if (properties == nullptr ||
            !amqp_wire::DecodeProperties(*properties, &partial_->delivery.message)) {
          partial_->malformed = true;
        }
      }
      if (size == 0) FinishDelivery();
      return OkStatus();
    }
    case AMQP_FRAME_BODY: {
      if (!partial_ || partial_->channel != frame.channel || !partial_->header_seen) {
        return Fail(ErrorCode::kCorrupt, "AMQP content body out of place");
      }
      std::string_view bytes = amqp_wire::View(frame.payload.body_fragment);
      if (bytes.size() > partial_->remaining) {
        return Fail(ErrorCode::kCorrupt, "AMQP content body longer than announced");
      }
      partial_->remaining -= bytes.size();
      if (partial_->deliver && !partial_->oversized) partial_->delivery.message.body += bytes;
      if (partial_->remaining == 0) FinishDelivery();
      return OkStatus();
    }
    default:
      return OkStatus();  // heartbeats are handled inside rabbitmq-c
  }
}

Status AmqpConnection::Impl::HandleMethod(amqp_channel_t channel, const amqp_method_t& method) {
  switch (method.id) {
    case AMQP_CONNECTION_CLOSE_METHOD: {
      auto* close = static_cast<amqp_connection_close_t*>(method.decoded);
      std::string reason = amqp_wire::DescribeClose(close->reply_code, close->reply_text);
      amqp_connection_close_ok_t ok{};
      amqp_send_method(conn_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
      return Fail(ErrorCode::kUnavailable, "AMQP broker closed the connection: {}", reason);
    }
    case AMQP_CHANNEL_CLOSE_METHOD: {
      auto* close = static_cast<amqp_channel_close_t*>(method.decoded);
      std::string reason = amqp_wire::DescribeClose(close->reply_code, close->reply_text);
      amqp_channel_close_ok_t ok{};
      amqp_send_method(conn_, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
      if (channel == kPublishChannel) return ReopenPublishChannel(reason);
      return Fail(ErrorCode::kUnavailable, "AMQP broker closed the consumer channel: {}", reason);
    }
    case AMQP_BASIC_ACK_METHOD:
      if (channel == kPublishChannel) {
        auto* ack = static_cast<amqp_basic_ack_t*>(method.decoded);
        ResolveConfirms(ack->delivery_tag, ack->multiple != 0, OkStatus());
      }
      return OkStatus();
    case AMQP_BASIC_NACK_METHOD:
      if (channel == kPublishChannel) {
        auto* nack = static_cast<amqp_basic_nack_t*>(method.decoded);
        ResolveConfirms(nack->delivery_tag, nack->multiple != 0,
                        Fail(ErrorCode::kInternal, "AMQP broker refused the message (nack)"));
      }
      return OkStatus();
    case AMQP_BASIC_RETURN_METHOD:
      partial_.emplace();
      partial_->channel = channel;
      return OkStatus();
    case AMQP_BASIC_DELIVER_METHOD: {
      auto* deliver = static_cast<amqp_basic_deliver_t*>(method.decoded);
      partial_.emplace();
      partial_->channel = channel;
      partial_->deliver = true;
      Delivery& d = partial_->delivery;
      d.tag = {generation_, deliver->delivery_tag};
      d.redelivered = deliver->redelivered != 0;
      d.consumer_tag = ToString(deliver->consumer_tag);
      d.exchange = ToString(deliver->exchange);
      d.routing_key = ToString(deliver->routing_key);
      return OkStatus();
    }
    case AMQP_BASIC_CANCEL_METHOD:  // the queue went away; reconnecting declares it again
      return Fail(ErrorCode::kUnavailable, "AMQP broker cancelled a consumer");
    default:
      return OkStatus();  // connection.blocked/unblocked and the like
  }
}

Status AmqpConnection::Impl::ReopenPublishChannel(const std::string& reason) {
  ResolveConfirms(next_publish_seq_, /*multiple=*/true,
                  Fail(ErrorCode::kUnavailable, "AMQP publish refused: {}", reason));
  next_publish_seq_ = 0;
  amqp_channel_open(conn_, kPublishChannel);
  MINERU_RETURN_IF_ERROR(CheckReply(amqp_get_rpc_reply(conn_), "channel.open"));
  amqp_confirm_select(conn_, kPublishChannel);
  return CheckReply(amqp_get_rpc_reply(conn_), "confirm.select");
}

void AmqpConnection::Impl::ResolveConfirms(uint64_t tag, bool multiple, const Status& status) {
  auto end = multiple ? confirms_.upper_bound(tag) : confirms_.find(tag);
  auto begin = multiple ? confirms_.begin() : end;
  if (!multiple) {
    if (end == confirms_.end()) return;
    end = std::next(end);
  }
  for (auto it = begin; it != end; ++it) it->second->set_value(status);
  confirms_.erase(begin, end);
}

void AmqpConnection::Impl::FinishDelivery() {
  PartialDelivery done = std::move(*partial_);
  partial_.reset();
  if (!done.deliver) return;
  uint64_t tag = done.delivery.tag.value;
  auto consumer = consumer_by_tag_.find(done.delivery.consumer_tag);
  if (done.oversized || done.malformed || consumer == consumer_by_tag_.end()) {
    // Unreadable: dead-lettered (or dropped) rather than requeued to fail again forever. An
    // unknown consumer tag (a consumer from before a channel reset) gets it requeued instead.
    bool requeue = !done.oversized && !done.malformed;
    if (done.oversized) Count(&AmqpCounters::oversized_rejected);
    if (done.malformed) Count(&AmqpCounters::malformed_rejected);
    if (amqp_basic_reject(conn_, kConsumeChannel, tag, requeue ? 1 : 0) != AMQP_STATUS_OK) {
      broken_ = true;
    }
    return;
  }
  unacked_.insert(tag);
  {
    std::lock_guard lock(counters_mu_);
    ++counters_.deliveries;
    if (done.delivery.redelivered) ++counters_.redeliveries;
  }
  consumers_[consumer->second].callback(std::move(done.delivery));
}

AmqpConnection::AmqpConnection() : impl_(std::make_unique<Impl>()) {}
AmqpConnection::~AmqpConnection() = default;

Status AmqpConnection::Start(const AmqpOptions& options, Topology topology) {
  return impl_->Start(options, std::move(topology));
}
Status AmqpConnection::Publish(std::string_view exchange, std::string_view routing_key,
                               const Message& message) {
  return impl_->Publish(exchange, routing_key, message);
}
Status AmqpConnection::Consume(std::string_view queue, uint16_t prefetch,
                               DeliveryCallback callback) {
  return impl_->Consume(queue, prefetch, std::move(callback));
}
Status AmqpConnection::Ack(DeliveryTag tag) { return impl_->Settle(tag, Settlement::kAck, false); }
Status AmqpConnection::Nack(DeliveryTag tag, bool requeue) {
  return impl_->Settle(tag, Settlement::kNack, requeue);
}
Status AmqpConnection::Reject(DeliveryTag tag, bool requeue) {
  return impl_->Settle(tag, Settlement::kReject, requeue);
}
bool AmqpConnection::connected() const { return impl_->connected(); }
AmqpCounters AmqpConnection::counters() const { return impl_->counters(); }
std::string AmqpConnection::last_error() const { return impl_->last_error(); }
void AmqpConnection::Close() { impl_->Close(); }

}  // namespace mineru::jobs
