<?php
// Drives the public ginger-php SDK, unchanged, through every payment method of docs/payment-methods.md
// against a running Tender whose project has them on (`tender project methods --project ID --methods all`):
// createOrder with the method, the customer's choice on the method's sandbox page (plain HTTP, as a
// browser posts the form, or with PAY_IN_BROWSER in a real browser that scripts/compat/sdk-browser.test.ts
// drives; bank transfer and viacash by the test endpoint through send()), getOrder, captures for
// BNPL (captureOrderTransaction, or per order line through send()), refundOrder (viacash refused).
// In the browser also amex (the card form) and pay-now (the customer picks iDEAL).
//   GINGER_PHP=/path/to/ginger-php TENDER_URL=http://127.0.0.1:8080 TENDER_KEY=test_... php scripts/compat/ginger-php-methods.php
require __DIR__ . '/common.php';

spl_autoload_register(function ($fqcn) {
    if (substr($fqcn, 0, 7) !== 'Ginger\\') return;
    $path = getenv('GINGER_PHP') . '/src/' . str_replace('\\', '/', substr($fqcn, 7)) . '.php';
    if (is_file($path)) require_once $path;
});

$client = \Ginger\Ginger::createClient(BASE, KEY);

/** An order of the method, with what the method needs (currency, order lines, a billing address). */
function methodOrder(string $method, string $currency = 'EUR', string $country = 'NL'): array
{
    $txn = ['payment_method' => $method];
    if ($method === 'ideal') $txn['payment_method_details'] = ['issuer_id' => 'INGBNL2A'];
    return [
        'currency' => $currency,
        'amount' => 2915,
        'description' => "ginger-php $method",
        'return_url' => SHOP . '/return',
        'customer' => ['first_name' => 'Anne', 'last_name' => 'de Vries', 'email_address' => 'anne@example.nl', 'address' => 'Kerkstraat 12', 'postal_code' => '1012AB', 'city' => 'Amsterdam', 'country' => $country, 'locale' => 'en_GB'],
        'order_lines' => [
            ['name' => 'Mug', 'type' => 'physical', 'amount' => 1210, 'currency' => $currency, 'quantity' => 2, 'vat_percentage' => 2100, 'merchant_order_line_id' => '1'],
            ['name' => 'Shipping', 'type' => 'shipping_fee', 'amount' => 495, 'currency' => $currency, 'quantity' => 1, 'vat_percentage' => 2100, 'merchant_order_line_id' => '2'],
        ],
        'transactions' => [$txn],
    ];
}

/** The test customer picks an outcome on the sandbox page (GET the page, POST its form with the CSRF token). */
function choose(array $order, string $outcome): int
{
    $txn = end($order['transactions']);
    if (IN_BROWSER) return payInBrowser($txn['payment_url']);
    $page = http('GET', $txn['payment_url']);
    $action = parse_url($txn['payment_url'], PHP_URL_PATH) . 'outcome/';
    if (!preg_match('#action="' . preg_quote($action, '#') . '"[^>]*><input type="hidden" name="csrf" value="([^"]+)"#', $page['body'], $m)) return 0;
    $ch = curl_init(BASE . $action);
    curl_setopt_array($ch, [CURLOPT_POST => true, CURLOPT_RETURNTRANSFER => true, CURLOPT_POSTFIELDS => http_build_query(['csrf' => $m[1], 'outcome' => $outcome])]);
    curl_exec($ch);
    $status = curl_getinfo($ch, CURLINFO_HTTP_CODE);
    curl_close($ch);
    return $status;
}

$redirects = ['ideal' => 'EUR', 'bancontact' => 'EUR', 'paypal' => 'EUR', 'sofort' => 'EUR', 'giropay' => 'EUR', 'payconiq' => 'EUR', 'swish' => 'SEK', 'mobilepay' => 'DKK', 'klarna-pay-now' => 'EUR', 'klarna-direct-debit' => 'EUR'];
foreach ($redirects as $method => $currency) {
    $order = $client->createOrder(methodOrder($method, $currency));
    check("$method: createOrder has a payment_url", isset($order['transactions'][0]['payment_url']));
    check("$method: paid on its sandbox page", choose($order, 'paid') === 303 && $client->getOrder($order['id'])['status'] === 'completed');
    $refund = $client->refundOrder($order['id'], ['amount' => 495, 'description' => 'shipping back']);
    check("$method: refundOrder", ($refund['flags'] ?? []) && in_array('is-refund', $refund['flags']));
}

foreach (['klarna-pay-later', 'afterpay'] as $method) {
    $order = $client->createOrder(methodOrder($method));
    check("$method: authorized on its sandbox page", choose($order, 'paid') === 303 && $client->getOrder($order['id'])['transactions'][0]['is_capturable'] === true);
    $txnId = $order['transactions'][0]['id'];
    if ($method === 'klarna-pay-later') {
        // two shipments: a mug, then the rest (the other mug and the shipping)
        $first = $client->send('POST', "/orders/{$order['id']}/transactions/$txnId/captures/", ['order_lines' => [['merchant_order_line_id' => '1', 'quantity' => 1]]]);
        check("$method: a capture per order line takes the line's amount", $first['amount'] === 1210 && $client->getOrder($order['id'])['transactions'][0]['is_capturable'] === true);
        $rest = $client->send('POST', "/orders/{$order['id']}/transactions/$txnId/captures/", ['order_lines' => [['merchant_order_line_id' => '1'], ['merchant_order_line_id' => '2']]]);
        check("$method: the second capture per order line completes it", $rest['amount'] === 1705 && $client->getOrder($order['id'])['transactions'][0]['status'] === 'completed');
    } else $client->captureOrderTransaction($order['id'], $txnId);
    check("$method: captured, has-captures", in_array('has-captures', $client->getOrder($order['id'])['flags']));
    $refund = $client->refundOrder($order['id'], ['amount' => 1210, 'order_lines' => [methodOrder($method)['order_lines'][0]]]);
    check("$method: refundOrder with order_lines", in_array('is-refund', $refund['flags']));
}

foreach (['bank-transfer' => 'NL', 'viacash' => 'DE'] as $method => $country) {
    $order = $client->createOrder(methodOrder($method, 'EUR', $country));
    $txn = $order['transactions'][0];
    check("$method: pending with what to pay", $txn['status'] === 'pending' && isset($txn['payment_method_details']['reference']));
    $paid = $client->send('POST', "/test/orders/{$order['id']}/bank-transfer/", ['outcome' => 'paid', 'amount' => 2915]);
    check("$method: completed by the test endpoint", $paid['status'] === 'completed');
    try {
        $client->refundOrder($order['id'], ['amount' => 100]);
        check("$method: refundOrder", $method !== 'viacash');
    } catch (\Exception $e) {
        check("$method: refundOrder refused (no refunds)", $method === 'viacash' && str_contains($e->getMessage(), 'can not be refunded'));
    }
}

if (IN_BROWSER) {
    // amex: the card form (American Express only), 3-D Secure frictionless; pay-now: the customer picks iDEAL
    foreach (['amex' => '', 'pay-now' => 'iDEAL'] as $method => $via) {
        $order = $client->createOrder(methodOrder($method));
        $back = payInBrowser($order['transactions'][0]['payment_url'], $via);
        $paid = $client->getOrder($order['id']);
        check("$method: paid in the browser", $back === 303 && $paid['status'] === 'completed');
        $refund = $client->refundOrder($order['id'], ['amount' => 495, 'description' => 'shipping back']);
        check("$method: refundOrder", in_array('is-refund', $refund['flags']));
    }
}

finish();
