/**
 * `customer_message` of a declined or failed transaction: one sentence a shop can show its
 * customer (webshop plugins do), in the order's language, beside the technical `reason`.
 */
const MESSAGE_LOCALES = ['en', 'nl', 'de', 'fr'] as const;
type MessageLocale = (typeof MESSAGE_LOCALES)[number];
type Kind = 'declined' | 'card' | 'authentication' | 'error';

const MESSAGES: Record<MessageLocale, Record<Kind, string>> = {
  en: {
    declined: 'Your payment was declined. Please try another card or payment method.',
    card: 'Your card could not be used. Please check the card details or try another card.',
    authentication: 'Your payment could not be verified with your bank. Please try again or use another card.',
    error: 'Your payment could not be completed. Please try again or choose another payment method.',
  },
  nl: {
    declined: 'Je betaling is geweigerd. Probeer een andere kaart of betaalmethode.',
    card: 'Je kaart kon niet worden gebruikt. Controleer de kaartgegevens of probeer een andere kaart.',
    authentication: 'Je betaling kon niet bij je bank worden bevestigd. Probeer het opnieuw of gebruik een andere kaart.',
    error: 'Je betaling kon niet worden voltooid. Probeer het opnieuw of kies een andere betaalmethode.',
  },
  de: {
    declined: 'Ihre Zahlung wurde abgelehnt. Bitte versuchen Sie eine andere Karte oder Zahlungsart.',
    card: 'Ihre Karte konnte nicht verwendet werden. Bitte prüfen Sie die Kartendaten oder nutzen Sie eine andere Karte.',
    authentication:
      'Ihre Zahlung konnte bei Ihrer Bank nicht bestätigt werden. Bitte versuchen Sie es erneut oder nutzen Sie eine andere Karte.',
    error: 'Ihre Zahlung konnte nicht abgeschlossen werden. Bitte versuchen Sie es erneut oder wählen Sie eine andere Zahlungsart.',
  },
  fr: {
    declined: 'Votre paiement a été refusé. Veuillez essayer une autre carte ou un autre moyen de paiement.',
    card: "Votre carte n'a pas pu être utilisée. Veuillez vérifier ses données ou essayer une autre carte.",
    authentication: "Votre paiement n'a pas pu être confirmé par votre banque. Veuillez réessayer ou utiliser une autre carte.",
    error: "Votre paiement n'a pas pu aboutir. Veuillez réessayer ou choisir un autre moyen de paiement.",
  },
};

const KIND_OF_REASON: Record<string, Kind> = {
  incorrect_cvc: 'card',
  expired_card: 'card',
  authentication_failed: 'authentication',
  processing_error: 'error',
};

/** `nl_NL`, `nl-BE`, `NL` -> nl; a language we do not write -> en. */
export function messageLocale(tag: unknown): MessageLocale {
  const lang = typeof tag === 'string' ? tag.trim().split(/[-_]/)[0]!.toLowerCase() : '';
  return (MESSAGE_LOCALES as readonly string[]).includes(lang) ? (lang as MessageLocale) : 'en';
}

/** The message of a transaction in `status` with `reason`, or undefined when it is neither declined nor failed. */
export function customerMessage(status: string, reason: string | null | undefined, locale: unknown): string | undefined {
  if (status !== 'declined' && status !== 'error') return undefined;
  const kind = KIND_OF_REASON[reason ?? ''] ?? (status === 'declined' ? 'declined' : 'error');
  return MESSAGES[messageLocale(locale)][kind];
}
